// license.test.js: the repository states one license, the one GLPK's
// (GPL-3.0-or-later) terms require of a binary that links it: LICENSE holds
// the GNU GPL version 3 text, and package.json, package-lock.json and the
// OpenAPI document's info.license all say GPL-3.0-or-later.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { REPO, need } = require("./lib.js");

const SPDX = "GPL-3.0-or-later";
const failures = [];
const read = (f) => fs.readFileSync(path.join(REPO, f), "utf8");

const text = read("LICENSE");
if (!/^\s*GNU GENERAL PUBLIC LICENSE\s+Version 3, 29 June 2007/.test(text)) failures.push("LICENSE is not the GNU GPL version 3 text");
if (!/END OF TERMS AND CONDITIONS/.test(text) || text.length < 30000) failures.push("LICENSE is not the whole GPL text");
const pkg = JSON.parse(read("package.json"));
if (pkg.license !== SPDX) failures.push(`package.json license is ${pkg.license}, not ${SPDX}`);
const lock = JSON.parse(read("package-lock.json"));
if (lock.packages[""].license !== SPDX) failures.push(`package-lock.json license is ${lock.packages[""].license}`);
const api = need("yaml").parse(read("docs/openapi.yaml"));
if (!api.info.license || api.info.license.identifier !== SPDX) failures.push("docs/openapi.yaml info.license.identifier is not " + SPDX);
// GLPK's own copyright file (Debian libglpk-dev) says the terms we follow.
const glpk = "/usr/share/doc/libglpk-dev/copyright";
if (fs.existsSync(glpk) && !/GPL-3(\.0)?\+|version 3 of the License, or\s+\(at your option\) any later/.test(fs.readFileSync(glpk, "utf8")))
  failures.push(`${glpk} no longer says GPL-3+: check the license again`);

if (failures.length) {
  console.error(failures.join("\n"));
  process.exit(1);
}
console.log(`LICENSE, package.json, package-lock.json and the API document say ${SPDX}`);
