/**
 * The payment schemes of the keys the CLI was given. Optional peers are loaded only when a key needs
 * them: viem's accounts for an EVM key, `@solana/kit` (and the Solana scheme, which imports it) for a
 * Solana key. A quote (`--dry-run`, `discover`) without a key needs neither: it uses an EVM signer
 * that refuses to sign. A missing peer is a usage error that says what to install.
 */
import type { PaymentScheme } from "../contracts";
import { bytesToHex } from "../protocol";
import { KEY_FILE_BYTES, readBounded } from "./files";
import { UsageError } from "./output";

type Environment = Readonly<Record<string, string | undefined>>;

export interface WalletOptions {
  evmKeyFile?: string | undefined;
  svmKeyFile?: string | undefined;
  svmRpc?: string | undefined;
  /** A quote only: without a key, a signer that never signs. */
  quoteOnly?: boolean | undefined;
}

/**
 * The module, or a usage error naming the package to install when `pkg` itself is missing;
 * any other failure as it is.
 */
export async function loadPeer<T>(pkg: string, purpose: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && String(message).includes(`'${pkg}'`)) {
      throw new UsageError(`install ${pkg} to ${purpose}: npm install ${pkg} (next to x402-pay).`);
    }
    throw error;
  }
}

export async function wallets(options: WalletOptions, env: Environment): Promise<PaymentScheme[]> {
  const schemes: PaymentScheme[] = [];
  const text = async (file: string | undefined, flag: string, variable: string) =>
    file === undefined ? env[variable] : new TextDecoder().decode(await readBounded(file, KEY_FILE_BYTES, flag));
  const evmKey = (await text(options.evmKeyFile, "--evm-key-file", "EVM_PRIVATE_KEY"))?.trim();
  const svmKey = (await text(options.svmKeyFile, "--svm-key-file", "SVM_PRIVATE_KEY"))?.trim();
  const evmSource = options.evmKeyFile ? "--evm-key-file" : "EVM_PRIVATE_KEY";
  const svmSource = options.svmKeyFile ? "--svm-key-file" : "SVM_PRIVATE_KEY";

  if (evmKey !== undefined) {
    if (!/^(0x)?[0-9a-fA-F]{64}$/.test(evmKey)) {
      throw new UsageError(`The EVM key (${evmSource}) is not 32 bytes of hex.`);
    }
    const { privateKeyToAccount } = await loadPeer("viem", "pay on EVM", () => import("viem/accounts"));
    const { exactEvm } = await import("../evm");
    const key = (evmKey.startsWith("0x") ? evmKey : `0x${evmKey}`) as `0x${string}`;
    schemes.push(exactEvm({ signer: privateKeyToAccount(key) }));
  } else if (svmKey === undefined) {
    if (!options.quoteOnly) {
      const where = "set EVM_PRIVATE_KEY or SVM_PRIVATE_KEY (or --evm-key-file / --svm-key-file)";
      throw new UsageError(`No key: ${where}. --dry-run needs none.`);
    }
    const { exactEvm } = await import("../evm");
    schemes.push(exactEvm({ signer: quoteSigner() }));
  }

  if (svmKey !== undefined) {
    const kit = await loadPeer("@solana/kit", "pay on Solana", () => import("@solana/kit"));
    const { exactSvm } = await loadPeer("@solana/kit", "pay on Solana", () => import("../svm"));
    let bytes: Uint8Array;
    try {
      const array = svmKey.startsWith("[");
      bytes = new Uint8Array(array ? (JSON.parse(svmKey) as number[]) : kit.getBase58Encoder().encode(svmKey));
    } catch {
      throw new UsageError(`The Solana key (${svmSource}) is neither base58 nor a JSON byte array.`);
    }
    if (bytes.length !== 64) throw new UsageError(`The Solana key (${svmSource}) is not 64 bytes.`);
    const signer = await kit.createKeyPairSignerFromBytes(bytes).catch(() => {
      throw new UsageError(`The Solana key (${svmSource}) is not a valid key pair.`);
    });
    schemes.push(exactSvm({ signer, ...(options.svmRpc && { rpc: options.svmRpc }) }));
  }
  return schemes;
}

/** An EVM signer for quotes: a random address, and a refusal should anything ask it to sign. */
function quoteSigner() {
  return {
    address: bytesToHex(crypto.getRandomValues(new Uint8Array(20))) as `0x${string}`,
    signTypedData: () => Promise.reject(new Error("A quote signs nothing.")),
  };
}
