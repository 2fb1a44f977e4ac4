// Translate with a web export under Node, on onnxruntime-node (tests and bench/web_*.py):
//   node translate.mjs EXPORT_DIR NODE_MODULES < {"texts": [...], "options": {...}}
// prints {"results": [...], "seconds": ..., "load_seconds": ...} as JSON.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [exportDir, nodeModules] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(nodeModules), "noop.js"));
const ort = require("onnxruntime-node");
const request = JSON.parse(readFileSync(0, "utf8"));
const started = performance.now();
const anuvad = await import(pathToFileURL(path.join(path.resolve(exportDir), "anuvad.js")).href);
const translator = await anuvad.load(path.resolve(exportDir), {
  ort,
  sessionOptions: { intraOpNumThreads: request.threads || 1, interOpNumThreads: 1 },
});
const loaded = performance.now();
const results = [];
for (const options of request.runs || [request.options || {}]) {
  const t0 = performance.now();
  const found = await translator.translate(request.texts, options);
  results.push({ options, seconds: (performance.now() - t0) / 1000, results: found });
}
process.stdout.write(JSON.stringify({ load_seconds: (loaded - started) / 1000, runs: results }));
