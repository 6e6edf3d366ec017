// Builds what /explore serves into dist/: the page's script (src/explore.js with DuckDB-WASM's
// and Observable Plot's modules, bundled by esbuild, so no bare import is left for the browser to
// resolve), its stylesheet, DuckDB-WASM's two workers and two WebAssembly modules as the package
// ships them, a gzip and a brotli copy of each file where that saves a tenth or more, and
// manifest.json: every file's size and sha256, and the pinned versions. The server reads only the
// manifest and the files it lists (serve/explore/assets.py).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
const duckdbDist = join(here, "node_modules/@duckdb/duckdb-wasm/dist");
const version = (name) => JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;
const started = Date.now();

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);
await build({
  entryPoints: [join(here, "src/explore.js"), join(here, "src/explore.css")],
  outdir: dist,
  bundle: true,
  format: "esm",
  minify: true,
  target: ["es2020"],
  legalComments: "linked",
  logLevel: "warning",
});
for (const name of ["duckdb-mvp.wasm", "duckdb-eh.wasm", "duckdb-browser-mvp.worker.js", "duckdb-browser-eh.worker.js"]) {
  copyFileSync(join(duckdbDist, name), join(dist, name));
}

const files = {};
for (const name of readdirSync(dist).sort()) {
  const body = readFileSync(join(dist, name));
  const entry = { bytes: body.length, sha256: createHash("sha256").update(body).digest("hex"), codings: {} };
  const copies = {
    br: () => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    gzip: () => gzipSync(body, { level: 9 }),
  };
  for (const [coding, compress] of Object.entries(copies)) {
    const copy = compress();
    if (copy.length <= body.length * 0.9) {
      const suffix = coding === "br" ? ".br" : ".gz";
      writeFileSync(join(dist, name + suffix), copy);
      entry.codings[coding] = copy.length;
    }
  }
  files[name] = entry;
}
const manifest = {
  packages: { "@duckdb/duckdb-wasm": version("@duckdb/duckdb-wasm"), "@observablehq/plot": version("@observablehq/plot") },
  files,
};
writeFileSync(join(dist, "manifest.json"), JSON.stringify(manifest, null, 1) + "\n");
const total = Object.values(files).reduce((sum, file) => sum + file.bytes, 0);
console.log(`  built the explorer's ${Object.keys(files).length} files (${(total / 1e6).toFixed(1)} MB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
