// Type-checks sets of in-memory files with the TypeScript compiler (strict, checkJs), one
// program per case, and reports every diagnostic:
//
//	node check.mjs cases.json > diagnostics.json
//
// cases.json: [{"name": string, "files": {"sdk.d.ts": text, "use.ts": text, …}}];
// diagnostics.json: {name: [{"file", "line", "code", "message"}]}.
import { readFileSync } from "node:fs";
import ts from "typescript";

const options = {
  strict: true,
  noEmit: true,
  allowJs: true,
  checkJs: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  lib: ["lib.es2022.d.ts"],
  types: [],
};
const report = {};
for (const c of JSON.parse(readFileSync(process.argv[2], "utf8"))) {
  const files = new Map(Object.entries(c.files).map(([name, text]) => ["/case/" + name, text]));
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile;
  host.getSourceFile = (name, lang, ...rest) =>
    files.has(name) ? ts.createSourceFile(name, files.get(name), lang, true) : getSourceFile.call(host, name, lang, ...rest);
  const fileExists = host.fileExists;
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  const readFile = host.readFile;
  host.readFile = (name) => (files.has(name) ? files.get(name) : readFile.call(host, name));
  const program = ts.createProgram([...files.keys()], options, host);
  report[c.name] = ts.getPreEmitDiagnostics(program).map((d) => ({
    file: d.file ? d.file.fileName.replace("/case/", "") : "",
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
    code: d.code,
    message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
  }));
}
process.stdout.write(JSON.stringify(report, null, 2) + "\n");
