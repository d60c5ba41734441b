# Sourced by the benchmark scripts: builds the benchmarks and sets CP (classes copied out of target/, so a later
# build cannot change them under a running harness) and FLAGS (the JVM flags Chronicle Queue needs).
# Needs RUN (a scratch path) and ROOT (the repository, also the working directory) set by the caller; MODULES
# (optional) names the modules whose classes go on CP (default: the benchmarks' runtime modules).
# One reactor invocation with -am: a separate `-pl benchmarks dependency:build-classpath` would resolve the engine
# from ~/.m2, which holds none on a fresh machine (or an older one). Not offline (-o): on a fresh machine the
# plugins are not downloaded yet.
mvn -B -ntp -q -pl benchmarks -am package dependency:build-classpath -DskipTests -Dmaven.javadoc.skip=true \
  -Dmdep.outputFile="$RUN.cp" -Dmdep.includeScope=runtime
rm -rf "$RUN" && mkdir -p "$RUN"
CP=""
for m in ${MODULES:-benchmarks engine spi provider-local-chronicle provider-postgres provider-dynamodb \
         provider-azure-tables provider-azure-blob cli testkit test-backends}; do
  cp -r "$m/target/classes" "$RUN/$m"
  CP="$CP:$RUN/$m"
done
CP="${CP#:}:$(tr ':' '\n' < "$RUN.cp" | grep -v -e '/dev/lattice/' -e "^$ROOT/" | paste -sd:)"
FLAGS=(--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
       --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
       -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true -Djava.awt.headless=true)
