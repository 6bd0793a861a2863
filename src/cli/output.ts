/**
 * What the CLI shows a person, and where the answer goes. Every message passes `shown` (commander's
 * own, the errors, the trace), so key material handed to the CLI in the wrong place (as the URL, a
 * header, a file name, an option's value) is never echoed; the only text printed past it is a value a
 * server sent that must be read whole (a settlement's transaction).
 */
import { open, stat, unlink, type FileHandle } from "node:fs/promises";
import { redactSecrets } from "../errors";
import { EXIT } from "./exit";
import type { CliIo } from "./index";

// Beyond the library's key shapes: any run of 64 or more letters and digits, so that a key changed on
// its way into a message (a host name lower-cased by URL parsing, a method upper-cased) is not shown.
const longRun = /[0-9A-Za-z]{64,}/g;

/** The text with anything shaped like key material replaced by `[redacted]`. */
export function shown(text: string): string {
  return redactSecrets(text).replace(longRun, "[redacted]");
}

/**
 * A value a server sent that must be read whole (a transaction): as it is when it is one word of
 * letters and digits, else quoted and redacted.
 */
export function word(value: string): string {
  return /^[0-9A-Za-z]{1,128}$/.test(value) ? value : shown(JSON.stringify(value));
}

/** Does `text` hold something shaped like key material (what `shown` would hide)? */
export const looksLikeKey = (text: string): boolean => shown(text) !== text;

/** A failure the CLI says in its own words, with its exit code. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    options: { cause?: unknown; moneyMayHaveMoved?: boolean } = {},
  ) {
    super(message, { cause: options.cause });
    this.moneyMayHaveMoved = options.moneyMayHaveMoved ?? false;
  }
  readonly moneyMayHaveMoved: boolean;
}

/** A mistake in what the user typed or gave: exit 2, with a message that shows no secret. */
export class UsageError extends CliFailure {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** A file name given for writing (`-o`, `--ledger`): never one shaped like a key, which it would be named after. */
export function refuseKeyShapedPath(path: string, flag: string): void {
  if (!looksLikeKey(path)) return;
  const shapes = "64 hex digits, a base58 secret key, a byte array";
  throw new UsageError(`${flag}: the file name looks like key material (${shapes}); refused, and not shown.`);
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException)?.code ?? String(error);

/** Where the answer goes: stdout, or the `-o` file, opened (so known to be writable) before anything is sent. */
export interface Sink {
  /** The answer arrived: an existing file is emptied now, not before. */
  begin(): Promise<void>;
  write(chunk: string | Uint8Array): Promise<void>;
  /** Bytes written so far. */
  readonly written: number;
  finish(): Promise<void>;
  /** Nothing (more) comes: a file this run created and never wrote to is removed. */
  abandon(): Promise<void>;
}

/** Writing the answer failed (a full disk, a closed pipe). */
export class OutputError extends CliFailure {}

export function stdoutSink(io: CliIo): Sink {
  let written = 0;
  return {
    begin: async () => {},
    async write(chunk) {
      try {
        await io.writeOut(chunk);
      } catch (error) {
        const why = shown(String((error as Error)?.message ?? error));
        throw new OutputError(`The answer could not be written to stdout (${why}).`, EXIT.usage, { cause: error });
      }
      written += chunk.length;
    },
    get written() {
      return written;
    },
    finish: async () => {},
    abandon: async () => {},
  };
}

/** `-o FILE`: opened for appending now (it must be writable before anything is paid), emptied when the answer comes. */
export async function fileSink(path: string): Promise<Sink> {
  refuseKeyShapedPath(path, "-o");
  const existed = await stat(path).then(
    () => true,
    () => false,
  );
  let handle: FileHandle;
  try {
    handle = await open(path, "a");
  } catch (error) {
    throw new UsageError(`-o ${path}: the file cannot be written (${codeOf(error)}); nothing was sent.`);
  }
  const regular = (await handle.stat()).isFile();
  let written = 0;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await handle.close();
  };
  const failed = (error: unknown) =>
    new OutputError(`The answer could not be written to ${path} (${codeOf(error)}).`, EXIT.usage, { cause: error });
  return {
    async begin() {
      try {
        // Appending to an emptied file writes from its start; /dev/null and pipes are not truncated.
        if (regular) await handle.truncate(0);
      } catch (error) {
        throw failed(error);
      }
    },
    async write(chunk) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
      try {
        for (let at = 0; at < bytes.length; ) at += (await handle.write(bytes, at, bytes.length - at)).bytesWritten;
      } catch (error) {
        throw failed(error);
      }
      written += bytes.length;
    },
    get written() {
      return written;
    },
    async finish() {
      try {
        await close();
      } catch (error) {
        throw failed(error);
      }
    },
    async abandon() {
      await close().catch(() => {});
      if (!existed && written === 0) await unlink(path).catch(() => {});
    },
  };
}

/** Progress on stderr: a line redrawn in place on a terminal, plain lines in a pipe. Text passes `shown`. */
export interface Progress {
  /** Something under way (a spinner on a terminal). */
  wait(text: string): void;
  /** A line of the trace, kept; `plain` (a transaction a server reported) is printed as it is, after `text`. */
  line(text: string, plain?: string): void;
  done(): void;
}

export function createProgress(io: CliIo, quiet: boolean): Progress {
  if (quiet) return { wait: () => {}, line: () => {}, done: () => {} };
  if (!io.errIsTTY) {
    return {
      wait: (text) => io.writeErr(`x402-pay: ${shown(text)}\n`),
      line: (text, plain = "") => io.writeErr(`x402-pay: ${shown(text)}${plain}\n`),
      done: () => {},
    };
  }
  const frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
  let waiting: string | undefined;
  let frame = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const draw = () => waiting !== undefined && io.writeErr(`\r\x1b[K${frames[frame++ % frames.length]} ${waiting}`);
  const clear = () => {
    if (waiting !== undefined) io.writeErr("\r\x1b[K");
    waiting = undefined;
  };
  return {
    wait(text) {
      waiting = shown(text);
      draw();
      timer ??= setInterval(draw, 80);
      timer.unref?.();
    },
    line(text, plain = "") {
      clear();
      io.writeErr(`✔ ${shown(text)}${plain}\n`);
    },
    done() {
      clearInterval(timer);
      timer = undefined;
      clear();
    },
  };
}
