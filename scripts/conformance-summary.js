// Summarizes a conformance run's output directory: the suite's exit code
// ignores warnings, so they are counted here from the checks files. Exits
// 1 on any failure or warning, or when no scenario ran.
const fs = require("fs"), path = require("path");
const files = [];
(function walk(d) { for (const f of fs.readdirSync(d)) { const p = path.join(d, f);
  if (fs.statSync(p).isDirectory()) walk(p); else if (f === "checks.json") files.push(p); } })(process.argv[2]);
let scen = 0, ok = 0, counts = {SUCCESS: 0, FAILURE: 0, WARNING: 0, INFO: 0}, bad = [];
for (const f of files) {
  const checks = JSON.parse(fs.readFileSync(f, "utf8")); scen++;
  let fail = false;
  for (const c of checks) { counts[c.status] = (counts[c.status] || 0) + 1;
    if (c.status === "FAILURE" || c.status === "WARNING") { fail = true;
      bad.push(`${path.basename(path.dirname(f))}: ${c.status} ${c.name}: ${c.errorMessage || ""}`); } }
  if (!fail) ok++;
}
console.log(`scenarios: ${ok}/${scen} clean; checks: ${counts.SUCCESS} passed, ${counts.FAILURE} failed, ${counts.WARNING} warnings`);
for (const b of bad) console.log("  " + b);
process.exit(counts.FAILURE || counts.WARNING || scen === 0 ? 1 : 0);
