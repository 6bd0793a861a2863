/**
 * A wallet-standard Solana wallet for tests, as an extension such as Phantom registers it: its own Ed25519 key
 * (WebCrypto, made at `create`), accounts once connected through `standard:connect`, and `solana:signTransaction`
 * and `solana:signMessage` that sign for real. Switches make it answer as users and wallets do: `reject` throws
 * Phantom's refusal, `hang` never answers, `tamper` adds an instruction before signing. It records what it was asked.
 *
 * Browser-safe: it loads only `@solana/kit` (types from `@wallet-standard/*`), no Node built-in, no Buffer, so a page
 * can bundle it and register it through `getWallets().register(wallet)` of `@wallet-standard/app`.
 */
import {
  AccountRole,
  appendTransactionMessageInstruction,
  compileTransaction,
  decompileTransactionMessage,
  generateKeyPair,
  getAddressEncoder,
  getAddressFromPublicKey,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  signBytes,
  type Address,
} from "@solana/kit";
import type {
  SolanaSignMessageFeature,
  SolanaSignMessageInput,
  SolanaSignTransactionFeature,
  SolanaSignTransactionInput,
} from "@solana/wallet-standard-features";
import type { Wallet, WalletAccount, WalletIcon } from "@wallet-standard/base";
import type { StandardConnectFeature, StandardEventsFeature, StandardEventsListeners } from "@wallet-standard/features";

export const SOLANA_CHAINS = ["solana:mainnet", "solana:devnet", "solana:testnet", "solana:localnet"] as const;
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" fill="#9945ff"/></svg>';
const ICON = `data:image/svg+xml;base64,${btoa(SVG)}` as WalletIcon;
const SYSTEM_PROGRAM = "11111111111111111111111111111111" as Address;

export type TestWalletFeatures = StandardConnectFeature &
  StandardEventsFeature &
  SolanaSignTransactionFeature &
  SolanaSignMessageFeature;

export interface TestWalletOptions {
  /** Default "x402 Test Wallet". */
  name?: string;
  /** Connected from the start, as a wallet the user approved before. Default false: call standard:connect. */
  connected?: boolean;
  /** Features to leave out (a wallet that cannot sign transactions, or messages). */
  without?: readonly (keyof TestWalletFeatures)[];
}

/** What the user and the wallet do with the next requests; tests flip them. */
export interface TestWalletSwitches {
  /** Throw as Phantom does when the user declines: `{ code: 4001, message: "User rejected the request." }`. */
  reject: boolean;
  /** Never answer (a prompt left open). */
  hang: boolean;
  /** Add an instruction (a System transfer of 1 lamport to itself) to each transaction before signing it. */
  tamper: boolean;
}

/** Phantom's refusal, as its provider throws it. */
export function phantomRejection(): Error & { code: number } {
  return Object.assign(new Error("User rejected the request."), { code: 4001 });
}

export class TestSolanaWallet implements Wallet {
  readonly version = "1.0.0" as const;
  readonly name: string;
  readonly icon = ICON;
  readonly chains = SOLANA_CHAINS;
  readonly switches: TestWalletSwitches = { reject: false, hang: false, tamper: false };
  /** How many times each feature was called. */
  readonly calls = { connect: 0, signTransaction: 0, signMessage: 0 };
  /** Every input the signing features got, in order. */
  readonly inputs = {
    transactions: [] as SolanaSignTransactionInput[],
    messages: [] as SolanaSignMessageInput[],
  };
  readonly account: WalletAccount;
  readonly address: Address;
  readonly #keys: CryptoKeyPair;
  readonly #without: readonly string[];
  readonly #listeners = new Set<StandardEventsListeners["change"]>();
  #connected: boolean;
  #waiting: (() => void)[] = [];

  private constructor(keys: CryptoKeyPair, address: Address, options: TestWalletOptions) {
    this.#keys = keys;
    this.address = address;
    this.name = options.name ?? "x402 Test Wallet";
    this.#connected = options.connected ?? false;
    this.#without = options.without ?? [];
    this.account = Object.freeze({
      address,
      publicKey: new Uint8Array(getAddressEncoder().encode(address)),
      chains: SOLANA_CHAINS,
      features: ["solana:signTransaction", "solana:signMessage"].filter((f) => !this.#without.includes(f)) as [],
      label: this.name,
      icon: ICON,
    });
  }

  /** A wallet with a new key pair (its private key cannot be exported). */
  static async create(options: TestWalletOptions = {}): Promise<TestSolanaWallet> {
    const keys = await generateKeyPair();
    return new TestSolanaWallet(keys, await getAddressFromPublicKey(keys.publicKey), options);
  }

  get accounts(): readonly WalletAccount[] {
    return this.#connected ? [this.account] : [];
  }

  get features(): TestWalletFeatures {
    const all: TestWalletFeatures = {
      "standard:connect": { version: "1.0.0", connect: async () => this.#connect() },
      "standard:events": { version: "1.0.0", on: (event, listener) => this.#on(event, listener) },
      "solana:signTransaction": {
        version: "1.0.0",
        supportedTransactionVersions: ["legacy", 0],
        signTransaction: (...inputs) => this.#signTransactions(inputs),
      },
      "solana:signMessage": { version: "1.1.0", signMessage: (...inputs) => this.#signMessages(inputs) },
    };
    for (const feature of this.#without) delete (all as Record<string, unknown>)[feature];
    return all;
  }

  /** Resolves when the wallet is next asked to sign (a transaction or a message). */
  nextRequest(): Promise<void> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Drops the account, as a user who disconnects the site. */
  disconnect(): void {
    this.#connected = false;
    this.#emit();
  }

  async #connect() {
    this.calls.connect++;
    if (!this.#connected) {
      this.#connected = true;
      this.#emit();
    }
    return { accounts: this.accounts };
  }

  #on(event: "change", listener: StandardEventsListeners["change"]) {
    if (event === "change") this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  #emit() {
    for (const listener of this.#listeners) listener({ accounts: this.accounts });
  }

  /** Counts the request and tells who waits for it; then refuses, hangs, or lets the signing go on. */
  async #asked(): Promise<void> {
    for (const resolve of this.#waiting.splice(0)) resolve();
    if (this.switches.hang) await new Promise<never>(() => {});
    if (this.switches.reject) throw phantomRejection();
  }

  #checkAccount(account: WalletAccount) {
    if (!this.#connected || account?.address !== this.address) throw new Error("Unknown or disconnected account.");
  }

  async #signTransactions(inputs: readonly SolanaSignTransactionInput[]) {
    this.calls.signTransaction++;
    this.inputs.transactions.push(...inputs);
    await this.#asked();
    return Promise.all(
      inputs.map(async ({ account, transaction }) => {
        this.#checkAccount(account);
        const given = getTransactionDecoder().decode(transaction);
        const decoded = this.switches.tamper ? this.#tampered(given.messageBytes) : given;
        const signature = await signBytes(this.#keys.privateKey, decoded.messageBytes);
        const signatures = { ...decoded.signatures, [this.address]: signature };
        return { signedTransaction: new Uint8Array(getTransactionEncoder().encode({ ...decoded, signatures })) };
      }),
    );
  }

  /** The message with a System transfer of 1 lamport from the wallet to itself appended, recompiled and unsigned. */
  #tampered(messageBytes: ReturnType<ReturnType<typeof getTransactionDecoder>["decode"]>["messageBytes"]) {
    const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(messageBytes));
    const transfer = {
      programAddress: SYSTEM_PROGRAM,
      accounts: [
        { address: this.address, role: AccountRole.WRITABLE_SIGNER },
        { address: this.address, role: AccountRole.WRITABLE },
      ],
      data: Uint8Array.from([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
    };
    return compileTransaction(appendTransactionMessageInstruction(transfer, message as never) as never);
  }

  async #signMessages(inputs: readonly SolanaSignMessageInput[]) {
    this.calls.signMessage++;
    this.inputs.messages.push(...inputs);
    await this.#asked();
    return Promise.all(
      inputs.map(async ({ account, message }) => {
        this.#checkAccount(account);
        return { signedMessage: message, signature: await signBytes(this.#keys.privateKey, message) };
      }),
    );
  }
}
