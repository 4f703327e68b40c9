// `pnpm demo`: the end-to-end pipeline arrives with the packages (see the root README).
console.log("The @x demo arrives with the packages: supervisor, process-guard, checkpoint, rmq-storage and");
console.log("polling-catalog are being built. Meanwhile, `pnpm test` runs every package's test suite.");
