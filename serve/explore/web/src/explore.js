// /explore: SQL over a release's Parquet files in the browser. DuckDB-WASM runs in a worker and
// reads the files at their immutable /releases/<version>/ addresses by HTTP range requests; the
// server never sees the SQL. The page's server-rendered parts (schema, examples, the config block)
// come from serve/explore/page.py.
import * as duckdb from "@duckdb/duckdb-wasm";
import * as Plot from "@observablehq/plot";
import { DataType } from "apache-arrow";

const config = JSON.parse(document.getElementById("explore-config").textContent);
const $ = (id) => document.getElementById(id);
const PAGE_ROWS = 100; // rows a page of the result table shows
const CHART_ROWS = 5000; // rows the chart draws at most: more is a picture of ink
const CANCELLED = Symbol("cancelled");

let engine = null; // a promise of {db, conn, version}: the running DuckDB and its views
let result = null; // {sql, fields, rows, page, version}
let cancel = null; // resolves the running query's race with CANCELLED

const quoteIdentifier = (name) => `"${name.replaceAll('"', '""')}"`;
const quoteLiteral = (text) => `'${text.replaceAll("'", "''")}'`;
const releaseUrl = (version, path) => new URL(`${config.releases}${version}/${path}`, location.href).href;
const assetUrl = (name) => new URL(name, new URL(config.assets, location.href)).href;

function status(text, state = "") {
  const line = $("status");
  line.textContent = text;
  line.dataset.state = state;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
}

/** The release's tables as [{name, path}]: the current one's from the page, another's from its datapackage.json. */
async function tablesOf(version) {
  if (version === config.version) return config.tables;
  const response = await fetch(releaseUrl(version, config.datapackage));
  if (!response.ok) {
    throw new Error(`release ${version} is not served here (HTTP ${response.status}); the current release is ${config.version}`);
  }
  const folder = config.datapackage.replace(/[^/]*$/, "");
  const described = await response.json();
  return described.resources.filter((r) => r.format === "parquet").map((r) => ({ name: r.name, path: folder + r.path }));
}

/** DuckDB in a worker, with a view per table of ``version`` over its Parquet file's pinned address. */
async function startEngine(version) {
  const bundle = await duckdb.selectBundle({
    mvp: { mainModule: assetUrl("duckdb-mvp.wasm"), mainWorker: assetUrl("duckdb-browser-mvp.worker.js") },
    eh: { mainModule: assetUrl("duckdb-eh.wasm"), mainWorker: assetUrl("duckdb-browser-eh.worker.js") },
  });
  const worker = new Worker(bundle.mainWorker);
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  await db.instantiate(bundle.mainModule);
  const conn = await db.connect();
  for (const table of await tablesOf(version)) {
    const url = releaseUrl(version, table.path);
    await conn.query(`CREATE VIEW ${quoteIdentifier(table.name)} AS SELECT * FROM read_parquet(${quoteLiteral(url)})`);
  }
  return { db, conn, version };
}

function restartEngine(version) {
  const previous = engine;
  const starting = startEngine(version);
  engine = starting;
  // Only the engine in use reports, and "ready" only when no query waits for it (a permalink's
  // query, or one run while the engine restarts, says "running" until its own answer comes).
  starting.then(
    () => {
      if (engine === starting && !cancel) status(`Ready: release ${version}. Write SQL, or pick an example.`, "ready");
    },
    (error) => {
      if (engine !== starting) return;
      status("The query engine did not start.", "error");
      showError(String(error.message || error));
    },
  );
  if (previous) previous.then((old) => old.db.terminate()).catch(() => {});
  return starting;
}

// Values as the table shows them, and as the chart plots them.
const isNumeric = (type) => DataType.isInt(type) || DataType.isFloat(type) || DataType.isDecimal(type);
const isTemporal = (type) => DataType.isDate(type) || DataType.isTimestamp(type);

function decimalToNumber(words, scale) {
  let value = 0n;
  for (let i = words.length - 1; i >= 0; i--) value = (value << 32n) + BigInt(words[i]);
  const bits = BigInt(words.length * 32);
  if (value >= 1n << (bits - 1n)) value -= 1n << bits;
  return Number(value) / 10 ** scale;
}

function plain(value, type) {
  if (value === null || value === undefined) return null;
  if (DataType.isDecimal(type)) return decimalToNumber(value, type.scale);
  if (typeof value === "bigint") return Number(value);
  if (isTemporal(type)) return new Date(value);
  if (typeof value === "object" && typeof value.toJSON === "function") return value.toJSON();
  return value;
}

function shown(value, type) {
  if (value === null) return "";
  if (value instanceof Date) {
    return DataType.isDate(type) ? value.toISOString().slice(0, 10) : value.toISOString().replace(".000Z", "Z");
  }
  if (typeof value === "number") return value.toLocaleString("en", { maximumFractionDigits: 6 });
  if (typeof value === "object") return JSON.stringify(value, (_, v) => (typeof v === "bigint" ? Number(v) : v));
  return String(value);
}

function tableRows(table) {
  const fields = table.schema.fields;
  const columns = fields.map((_, i) => table.getChildAt(i));
  const rows = new Array(table.numRows);
  for (let r = 0; r < table.numRows; r++) {
    const row = {};
    fields.forEach((field, i) => (row[field.name] = plain(columns[i].get(r), field.type)));
    rows[r] = row;
  }
  return rows;
}

function stripSemicolons(sql) {
  return sql.trim().replace(/;+\s*$/, "");
}

async function runQuery() {
  const sql = $("sql").value;
  if (!stripSemicolons(sql)) return;
  $("error").hidden = true;
  $("run").disabled = true;
  $("cancel").hidden = false;
  status("Running…", "running");
  const started = performance.now();
  const cancelled = new Promise((resolve) => (cancel = () => resolve(CANCELLED)));
  try {
    const running = await Promise.race([engine, cancelled]);
    if (running === CANCELLED) return;
    const answer = await Promise.race([running.conn.query(stripSemicolons(sql)), cancelled]);
    if (answer === CANCELLED) return;
    const seconds = (performance.now() - started) / 1000;
    result = { sql, fields: answer.schema.fields, rows: tableRows(answer), page: 0, version: running.version };
    status(`${result.rows.length.toLocaleString("en")} rows in ${seconds.toFixed(2)} s (release ${running.version})`, "done");
    renderTable();
    renderChartControls();
    renderChart();
    $("result").hidden = false;
  } catch (error) {
    status("The query failed.", "error");
    showError(String(error.message || error));
  } finally {
    cancel = null;
    $("run").disabled = false;
    $("cancel").hidden = true;
  }
}

function cancelQuery() {
  if (!cancel) return;
  const version = result?.version || currentVersion();
  cancel();
  status("Cancelled. Restarting the engine (the page keeps your SQL)…", "cancelled");
  restartEngine(version);
}

function renderTable() {
  const { fields, rows, page } = result;
  const units = Object.fromEntries(
    fields.filter((f) => isNumeric(f.type) && config.units[f.name] && fields.some((g) => g.name === config.units[f.name])).map((f) => [f.name, config.units[f.name]]),
  );
  const head = $("result-table").createTHead();
  head.replaceChildren();
  const headRow = head.insertRow();
  for (const field of fields) {
    const cell = document.createElement("th");
    cell.scope = "col";
    cell.textContent = field.name;
    cell.title = String(field.type);
    if (isNumeric(field.type)) cell.className = "figure";
    headRow.append(cell);
  }
  const body = $("result-table").tBodies[0] || $("result-table").createTBody();
  body.replaceChildren();
  for (const row of rows.slice(page * PAGE_ROWS, (page + 1) * PAGE_ROWS)) {
    const line = body.insertRow();
    for (const field of fields) {
      const cell = line.insertCell();
      let text = shown(row[field.name], field.type);
      if (isNumeric(field.type)) {
        cell.className = "figure";
        if (units[field.name] && row[field.name] !== null && row[units[field.name]]) text += ` ${row[units[field.name]]}`;
      }
      if (row[field.name] === null) cell.classList.add("null");
      cell.textContent = row[field.name] === null ? "null" : text;
    }
  }
  const last = Math.max(0, Math.ceil(rows.length / PAGE_ROWS) - 1);
  const first = rows.length ? page * PAGE_ROWS + 1 : 0;
  $("page-label").textContent = `rows ${first.toLocaleString("en")}–${Math.min(rows.length, (page + 1) * PAGE_ROWS).toLocaleString("en")} of ${rows.length.toLocaleString("en")}`;
  $("previous").disabled = page === 0;
  $("next").disabled = page >= last;
}

function turnPage(step) {
  result.page += step;
  renderTable();
}

function fill(select, names, chosen) {
  select.replaceChildren(...names.map((name) => new Option(name, name, false, name === chosen)));
}

function renderChartControls() {
  const { fields } = result;
  const names = fields.map((f) => f.name);
  const numeric = fields.filter((f) => isNumeric(f.type)).map((f) => f.name);
  const x = fields.find((f) => isTemporal(f.type))?.name || fields.find((f) => !isNumeric(f.type))?.name || numeric[0];
  const y = numeric.find((name) => name !== x) || numeric[0];
  fill($("chart-x"), names, x);
  fill($("chart-y"), names, y);
  fill($("chart-color"), ["(none)", ...names.filter((n) => !numeric.includes(n))], "(none)");
  $("chart-mark").value = "auto";
}

/** bar for a category against a number, line for a date or time, dot for two numbers. */
function markFor(xType) {
  if (isTemporal(xType)) return "line";
  if (isNumeric(xType)) return "dot";
  return "bar";
}

function renderChart() {
  const figure = $("chart");
  const x = $("chart-x").value;
  const y = $("chart-y").value;
  const typeOf = (name) => result.fields.find((f) => f.name === name)?.type;
  if (!x || !y || !isNumeric(typeOf(y))) {
    figure.replaceChildren(Object.assign(document.createElement("p"), { textContent: "No chart: the result has no numeric column to plot." }));
    return;
  }
  const color = $("chart-color").value === "(none)" ? undefined : $("chart-color").value;
  const mark = $("chart-mark").value === "auto" ? markFor(typeOf(x)) : $("chart-mark").value;
  const rows = result.rows.slice(0, CHART_ROWS).filter((row) => row[x] !== null && row[y] !== null);
  const marks = {
    bar: () => [Plot.barX(rows, { x: y, y: x, fill: color || "#2f7d4f", sort: { y: "-x" }, tip: true }), Plot.ruleX([0])],
    line: () => [Plot.lineY(rows, { x, y, stroke: color, marker: true, tip: true })],
    dot: () => [Plot.dot(rows, { x, y, stroke: color, tip: true })],
  }[mark]();
  const chart = Plot.plot({
    marks,
    marginLeft: mark === "bar" ? 180 : 60,
    width: Math.min(900, figure.clientWidth || 900),
    grid: true,
    color: color ? { legend: true } : undefined,
    x: { label: mark === "bar" ? y : x },
    y: { label: mark === "bar" ? x : y },
  });
  const caption = document.createElement("figcaption");
  caption.textContent = `${mark} of ${y} by ${x}${color ? `, coloured by ${color}` : ""}${result.rows.length > CHART_ROWS ? ` (first ${CHART_ROWS.toLocaleString("en")} rows)` : ""}`;
  figure.replaceChildren(chart, caption);
}

async function download(format) {
  if (!result) return;
  const name = `result.${format}`;
  const options = format === "csv" ? "(HEADER, DELIMITER ',')" : "(FORMAT PARQUET)";
  try {
    const running = await engine;
    // the newline ends a -- comment on the query's last line, which would otherwise swallow the parenthesis
    await running.conn.query(`COPY (${stripSemicolons(result.sql)}\n) TO ${quoteLiteral(name)} ${options}`);
    const bytes = await running.db.copyFileToBuffer(name);
    await running.db.dropFile(name);
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([bytes], { type: format === "csv" ? "text/csv" : "application/vnd.apache.parquet" }));
    link.download = `${config.dataset}-${running.version}.${format}`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
  } catch (error) {
    showError(`The download failed: ${error.message || error}`);
  }
}

function currentVersion() {
  return new URLSearchParams(location.hash.slice(1)).get("version") || config.version;
}

function permalink() {
  const fragment = new URLSearchParams({ version: result?.version || currentVersion(), sql: $("sql").value });
  history.replaceState(null, "", `#${fragment}`);
  $("permalink").href = location.href;
  $("permalink").hidden = false;
  navigator.clipboard?.writeText(location.href).then(
    () => status("The permalink is in the address bar and on your clipboard.", "done"),
    () => status("The permalink is in the address bar.", "done"),
  );
}

function showRelease(version) {
  const banner = $("release-banner");
  banner.hidden = version === config.version;
  banner.textContent = `You are querying release ${version}, pinned by this link; the current release is ${config.version}.`;
}

function openFromFragment() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const version = currentVersion();
  showRelease(version);
  restartEngine(version);
  if (fragment.get("sql")) {
    $("sql").value = fragment.get("sql");
    runQuery();
  }
}

$("query").addEventListener("submit", (event) => {
  event.preventDefault();
  runQuery();
});
$("sql").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    runQuery();
  }
});
$("cancel").addEventListener("click", cancelQuery);
$("previous").addEventListener("click", () => turnPage(-1));
$("next").addEventListener("click", () => turnPage(1));
for (const id of ["chart-x", "chart-y", "chart-mark", "chart-color"]) $(id).addEventListener("change", renderChart);
$("download-csv").addEventListener("click", () => download("csv"));
$("download-parquet").addEventListener("click", () => download("parquet"));
$("make-permalink").addEventListener("click", permalink);
for (const button of document.querySelectorAll("[data-sql]")) {
  button.addEventListener("click", () => {
    $("sql").value = button.dataset.sql;
    runQuery();
  });
}
window.addEventListener("hashchange", () => {
  if (new URLSearchParams(location.hash.slice(1)).get("sql") !== $("sql").value) openFromFragment();
});
document.body.classList.add("scripted");
openFromFragment();
