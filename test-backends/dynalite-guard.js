// Preloaded into dynalite (node -r dynalite-guard.js ...; see DynaliteServer). dynalite 4.0.0 rethrows a request's
// error event (index.js: req.on('error', function (err) { throw err })), so a client that dies in the middle of
// sending a request (ECONNRESET 'aborted') takes the whole server down. The real service drops such a request; so
// does this guard, printing one line per drop (DynaliteServer counts them). Any other uncaught error still ends the
// process, with the error on stderr and exit code 70.
'use strict';
process.on('uncaughtException', (err) => {
  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') {
    console.log('lattice-guard: dropped a request its client aborted');
    return;
  }
  console.error(err);
  process.exit(70);
});
