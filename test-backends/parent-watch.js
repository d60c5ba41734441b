// Runs a Node server script in this process and exits when stdin closes, i.e. when the JVM that started it
// dies (even by SIGKILL), so no emulator outlives its test run. Usage: node parent-watch.js <script> [args...]
'use strict';
const path = require('path');
if (process.argv.length < 3) {
  console.error('usage: node parent-watch.js <script> [args...]');
  process.exit(2);
}
const script = path.resolve(process.argv[2]);
process.argv = [process.argv[0], script].concat(process.argv.slice(3));
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
require(script);
