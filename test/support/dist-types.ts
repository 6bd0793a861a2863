/**
 * A TypeScript program over dist's declarations, `x402-pay` and `x402-pay/*` resolved as a user's bundler resolves the
 * package's exports (each entry's `import` types in dist/), never src: for tests that compile what a user writes.
 */
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** `files` compiled against dist: ES2022 modules, a browser's libs; `options` add to or override these. */
export function distProgram(files: readonly string[], options: ts.CompilerOptions): ts.Program {
  return ts.createProgram([...files], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    noEmit: true,
    baseUrl: root,
    // @openai/agents cannot be installed on Node 20: its stand-in (types/openai-agents.d.ts), as in tsconfig.json.
    paths: {
      "x402-pay": ["dist/index.d.ts"],
      "x402-pay/*": ["dist/*.d.ts"],
      "@openai/agents": ["types/openai-agents.d.ts"],
    },
    ...options,
  });
}

/** The program's errors, each as `file: message` with the file relative to the repository. */
export const problemsOf = (program: ts.Program): string[] =>
  ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName.replace(root, "") ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
