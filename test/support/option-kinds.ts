/**
 * Every option of the public API that takes a list or a number, found from the type definitions themselves (the
 * TypeScript checker over the package's entry points), so that a test can hold a case for each and fail for one
 * added without it. An option is named by the exported function that takes it and its path in the argument:
 * `createX402Client(options).policy.maxFeeBps`, `authCaptureEvm(options).capturers`, `sanitize(max)`; an option of a
 * method of what it returns as `createDiscoveryClient().list(query).limit`.
 *
 * Walked: each exported function's parameters and those of the methods of the object it returns (if declared in src/), and within them the properties declared in src/ whose type is an
 * options object (a type named `...Options`, `...Policy`, `...Query`, `...Sizing`, or written in place), to a depth
 * of three. A USD amount (`Money`) counts as a number. Not walked: the objects an option carries (a client, a signer, a store, a scheme): theirs are not options.
 */
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";
import ts from "typescript";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The public entry points (tsup.config.ts), but the CLI's. */
export const ENTRIES = [
  "src/index.ts",
  "src/fetch/index.ts",
  "src/axios/index.ts",
  "src/evm/index.ts",
  "src/svm/index.ts",
  "src/extensions/offer-receipt/index.ts",
  "src/entries/errors.ts",
  "src/entries/protocol.ts",
  "src/schemas/index.ts",
  "src/file/index.ts",
  "src/redis/index.ts",
  "src/mcp/index.ts",
  "src/discovery/index.ts",
  "src/ai-sdk/index.ts",
  "src/langchain/index.ts",
  "src/openai-agents/index.ts",
];

export type OptionKind = "list" | "number" | "list|number";

/** Each list or number option, by name, with its kind. */
export function optionsOfKind(): Map<string, OptionKind> {
  const config = ts.readConfigFile(resolve(root, "tsconfig.json"), ts.sys.readFile).config;
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root);
  const files = ENTRIES.map((file) => resolve(root, file));
  const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  const src = resolve(root, "src");
  const ours = (declaration: ts.Declaration | undefined) => !!declaration?.getSourceFile().fileName.startsWith(src);
  const found = new Map<string, OptionKind>();

  const kindOf = (type: ts.Type): OptionKind | undefined => {
    const kinds = new Set<string>();
    for (const part of type.isUnion() ? type.types : [type]) {
      if (part.flags & (ts.TypeFlags.NumberLike | ts.TypeFlags.BigIntLike)) kinds.add("number");
      else if (checker.isArrayType(part) || checker.isTupleType(part)) kinds.add("list");
    }
    return kinds.size === 0 ? undefined : ([...kinds].sort().join("|") as OptionKind);
  };
  /** An options object: declared in src/, named as one or written in place, not a function. */
  const isOptions = (type: ts.Type): boolean => {
    // `Filter & { offset? }`: options if a part is.
    if (type.isIntersection()) return type.types.some(isOptions);
    const symbol = type.getSymbol() ?? type.aliasSymbol;
    return (
      !!(type.flags & ts.TypeFlags.Object) &&
      type.getCallSignatures().length === 0 &&
      ours(symbol?.declarations?.[0]) &&
      /^(__type|__object|.*(Options|Policy|Query|Sizing))$/.test(symbol?.name ?? "")
    );
  };
  const walk = (path: string, type: ts.Type, depth: number) => {
    for (const property of checker.getPropertiesOfType(type)) {
      const declaration = property.valueDeclaration ?? property.declarations?.[0];
      if (!ours(declaration)) continue;
      const propertyType = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, declaration!));
      const name = `${path}.${property.name}`;
      // A USD amount (`Money`, a string) is a number written as text; so is a ceiling (`PaymentCeiling`: USD or base units).
      const money =
        propertyType.getCallSignatures().length === 0 &&
        /\b(Money|PaymentCeiling)\b/.test((declaration as ts.PropertySignature).type?.getText() ?? "");
      const kind = money ? "number" : kindOf(propertyType);
      if (kind) found.set(name, kind);
      else if (depth < 3)
        for (const part of propertyType.isUnion() ? propertyType.types : [propertyType])
          if (isOptions(part)) walk(name, part, depth + 1);
    }
  };

  for (const file of files) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!(symbol.flags & ts.SymbolFlags.Function) || !symbol.valueDeclaration) continue;
      const type = checker.getTypeOfSymbolAtLocation(symbol, symbol.valueDeclaration);
      for (const signature of type.getCallSignatures()) {
        parameters(symbol.name, signature);
        // The methods of what it returns (a client's, a scheme's): their options too.
        const returned = signature.getReturnType();
        if (!ours(returned.getSymbol()?.declarations?.[0])) continue;
        for (const method of checker.getPropertiesOfType(returned)) {
          const declaration = method.valueDeclaration ?? method.declarations?.[0];
          if (!ours(declaration)) continue;
          const methodType = checker.getTypeOfSymbolAtLocation(method, declaration!);
          for (const call of methodType.getCallSignatures()) parameters(`${symbol.name}().${method.name}`, call);
        }
      }
    }
  }
  return found;

  function parameters(owner: string, signature: ts.Signature) {
    for (const parameter of signature.getParameters()) {
      const name = `${owner}(${parameter.name})`;
      const parameterType = checker.getNonNullableType(
        checker.getTypeOfSymbolAtLocation(parameter, parameter.valueDeclaration!),
      );
      const kind = kindOf(parameterType);
      if (kind) found.set(name, kind);
      else
        for (const part of parameterType.isUnion() ? parameterType.types : [parameterType])
          if (isOptions(part)) walk(name, part, 0);
    }
  }
}
