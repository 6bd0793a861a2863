// A compile-time stand-in for the part of `@openai/agents` (0.20) that x402-pay/openai-agents and its docs use:
// `tool()` and what it takes and returns, and the agent, run and approval names of docs/agents.md; written from the
// package's published declarations. The package cannot be
// a devDependency here: its `openai` dependency declares Node >= 22, and the repository installs on Node 20 without
// an engine warning. tsconfig's `paths` points the name here for the type check and the build; the published
// declarations keep importing `@openai/agents`, so a user's types are the real ones. The runtime matrix (Node 22)
// installs the real package, type-checks a user's use of the door against it and runs the door's tests there.

type UnknownContext = unknown;

/** The run's context, as a tool's callbacks get it. */
export declare class RunContext<TContext = UnknownContext> {
  context: TContext;
}

/** The function call a tool runs for. */
export interface FunctionCallItem {
  type: "function_call";
  callId: string;
  name: string;
  arguments: string;
  status?: "in_progress" | "completed" | "incomplete";
}

/** What `execute` gets beside the input and the context. */
export type ToolCallDetails = {
  toolCall?: FunctionCallItem;
  resumeState?: string;
  signal?: AbortSignal;
};

type JsonSchemaDefinitionEntry = Record<string, unknown>;

/** A JSON schema of a non-strict tool's parameters. */
export type JsonObjectSchemaNonStrict<Properties extends Record<string, JsonSchemaDefinitionEntry>> = {
  type: "object";
  properties: Properties;
  required: (keyof Properties)[];
  additionalProperties: true;
  description?: string;
};

export type JsonObjectSchemaStrict<Properties extends Record<string, JsonSchemaDefinitionEntry>> = {
  type: "object";
  properties: Properties;
  required: (keyof Properties)[];
  additionalProperties: false;
  description?: string;
};

export type JsonObjectSchema<Properties extends Record<string, JsonSchemaDefinitionEntry>> =
  | JsonObjectSchemaStrict<Properties>
  | JsonObjectSchemaNonStrict<Properties>;

export type ToolInputParameters = undefined | JsonObjectSchema<any>;

export type ToolExecuteArgument<TParameters extends ToolInputParameters> =
  TParameters extends JsonObjectSchema<any> ? unknown : string;

export type ToolApprovalFunction<TParameters extends ToolInputParameters> = (
  runContext: RunContext,
  input: ToolExecuteArgument<TParameters>,
  callId?: string,
) => Promise<boolean>;

export type ToolEnabledFunction<Context = UnknownContext> = (
  runContext: RunContext<Context>,
  agent: unknown,
) => Promise<boolean>;

export type ToolErrorFunction<Context = UnknownContext, Result = string> = (
  context: RunContext<Context>,
  error: Error | unknown,
  details?: ToolCallDetails,
) => Promise<Result> | Result;

/** A function tool, as `tool()` returns it. */
export type FunctionTool<
  Context = UnknownContext,
  TParameters extends ToolInputParameters = undefined,
  Result = unknown,
> = {
  type: "function";
  name: string;
  description: string;
  parameters: JsonObjectSchema<any>;
  strict: boolean;
  invoke: (runContext: RunContext<Context>, input: string, details?: ToolCallDetails) => Promise<string | Result>;
  errorFunction?: ToolErrorFunction<Context, string | Result> | null;
  needsApproval: ToolApprovalFunction<TParameters>;
  timeoutMs?: number;
  isEnabled: ToolEnabledFunction<Context>;
};

/** The options of a non-strict tool (a JSON schema, parsed but not validated by the SDK). */
export type ToolOptions<
  TParameters extends JsonObjectSchemaNonStrict<any>,
  Context = UnknownContext,
  Result = string,
> = {
  name?: string;
  description: string;
  parameters: TParameters;
  strict: false;
  execute: (
    input: ToolExecuteArgument<TParameters>,
    context?: RunContext<Context>,
    details?: ToolCallDetails,
  ) => Promise<Result> | Result;
  errorFunction?: ToolErrorFunction<Context, Result> | null;
  needsApproval?: boolean | ToolApprovalFunction<TParameters>;
  timeoutMs?: number;
};

export declare function tool<
  TParameters extends JsonObjectSchemaNonStrict<any>,
  Context = UnknownContext,
  Result = string,
>(options: ToolOptions<TParameters, Context, Result>): FunctionTool<Context, TParameters, Result>;

/** A tool an agent can use (here: function tools). */
export type Tool<Context = UnknownContext> = FunctionTool<Context, any, any>;

/** An agent: its name, instructions, model and tools. */
export declare class Agent<TContext = UnknownContext> {
  constructor(config: {
    name: string;
    instructions?: string;
    model?: string;
    tools?: Tool<TContext>[];
    mcpServers?: MCPServer[];
  });
  name: string;
}

/** A call that waits for a person's approval. */
export declare class RunToolApprovalItem {
  readonly type: "tool_approval_item";
  rawItem: FunctionCallItem | { type: "hosted_tool_call"; id?: string; name: string };
  get name(): string | undefined;
  get arguments(): string | undefined;
}

/** A run's state: approvals are given on it, and it is saved as text and read back. */
export declare class RunState<TContext = UnknownContext, TAgent extends Agent<any> = Agent<any>> {
  approve(approvalItem: RunToolApprovalItem, options?: { alwaysApprove?: boolean }): void;
  reject(approvalItem: RunToolApprovalItem, options?: { alwaysReject?: boolean; message?: string }): void;
  toString(): string;
  static fromString<TContext, TAgent extends Agent<any>>(
    initialAgent: TAgent,
    str: string,
  ): Promise<RunState<TContext, TAgent>>;
}

/** What a run returns. */
export declare class RunResult<TContext = UnknownContext, TAgent extends Agent<any> = Agent<any>> {
  readonly state: RunState<TContext, TAgent>;
  get interruptions(): RunToolApprovalItem[];
  get finalOutput(): string | undefined;
}

export declare function run<TAgent extends Agent<any>, TContext = undefined>(
  agent: TAgent,
  input: string | RunState<TContext, TAgent>,
  options?: { signal?: AbortSignal; maxTurns?: number; context?: TContext },
): Promise<RunResult<TContext, TAgent>>;

/** A tool call's options. */
export interface MCPCallToolOptions {
  signal?: AbortSignal;
}

/** An MCP tool's full result. */
export type CallToolResult = {
  content: Array<{ type: string; [key: string]: unknown }>;
  _meta?: Record<string, unknown>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};
export type CallToolResultContent = CallToolResult["content"] &
  Pick<CallToolResult, "_meta" | "structuredContent" | "isError">;

/** An MCP tool as a server lists it. */
export type MCPTool = { name: string; description?: string; inputSchema: Record<string, unknown> };

/** An MCP server an agent's `mcpServers` takes. */
export interface MCPServer {
  cacheToolsList: boolean;
  connect(): Promise<void>;
  readonly name: string;
  close(): Promise<void>;
  listTools(): Promise<MCPTool[]>;
  callTool(
    toolName: string,
    args: Record<string, unknown> | null,
    meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<CallToolResultContent>;
  callToolResult?(
    toolName: string,
    args: Record<string, unknown> | null,
    meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<CallToolResult>;
  invalidateToolsCache(): Promise<void>;
}

/** An MCP server over streamable HTTP: an `MCPServer` whose full results can be read. */
export interface MCPServerStreamableHttp extends MCPServer {
  callToolResult: NonNullable<MCPServer["callToolResult"]>;
}
export declare const MCPServerStreamableHttp: new (options: {
  url: string;
  name?: string;
  cacheToolsList?: boolean;
}) => MCPServerStreamableHttp;
