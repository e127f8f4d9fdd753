/**
 * The SDK's ChainDriver conformance suite with every member key in a SoftHSM2 token behind the
 * PKCS#11 backend: XRPL 2-of-3 wallets on the offline devnet, one all ed25519 (CKM_EDDSA) and one
 * all secp256k1 (CKM_ECDSA, low S and recovery id computed by the backend). The suite builds, signs
 * at quorum, assembles, submits and reads the outcome from the devnet's own state: the devnet
 * accepting the transfer is the proof that the token's signatures are what the ledger wants.
 */
import { ACCOUNT_ROOT_FLAGS, createXrplDriver } from '@vault/driver-xrpl';
import { startXrplDevnet, type XrplDevnet } from '@vault/driver-xrpl/devnet';
import { createXrplSigner, xrplAddressOf } from '@vault/driver-xrpl/signer';
import type { Curve, SigningKey, WalletDescriptor } from '@vault/sdk';
import { createSoftwareKey, describeChainDriver, type ConformanceFixture } from '@vault/sdk/testing';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { ensureSoftHsm, initSoftToken, type SoftToken } from '../../../../scripts/softhsm.mjs';
import { generateTokenKey, Pkcs11Backend, Pkcs11ConfigSchema } from '../../src/signer/pkcs11.js';

const PIN = 'conformance-pin-4417';
const state: { devnet?: XrplDevnet; token?: SoftToken; backend?: Pkcs11Backend; keys: Record<Curve, SigningKey[]> } = { keys: { ed25519: [], secp256k1: [] } };

beforeAll(async () => {
  ensureSoftHsm();
  state.token = initSoftToken({ label: 'vault-conformance', pin: PIN });
  process.env['SOFTHSM2_CONF'] = state.token.conf;
  const labels = ['ed-a', 'ed-b', 'ed-c', 'k1-a', 'k1-b', 'k1-c', 'k1-outsider'];
  const config = Pkcs11ConfigSchema.parse({ format: 'vault-signer-pkcs11', version: 1, module: state.token.module, token_label: 'vault-conformance', keys: labels.map((label) => ({ label })) });
  for (const label of labels) generateTokenKey(config, PIN, { curve: label.startsWith('ed') ? 'ed25519' : 'secp256k1', label });
  state.backend = await Pkcs11Backend.open(config, { pin: PIN });
  const byLabel = new Map(state.backend.list().map((k) => [state.backend!.labelOf(k.publicKeyHex), state.backend!.signingKey(k.publicKeyHex)!]));
  state.keys.ed25519 = ['ed-a', 'ed-b', 'ed-c'].map((l) => byLabel.get(l)!);
  state.keys.secp256k1 = ['k1-a', 'k1-b', 'k1-c', 'k1-outsider'].map((l) => byLabel.get(l)!);
  state.devnet = await startXrplDevnet({ networkId: 21337, closeIntervalMs: 40 });
}, 120_000);
afterAll(async () => {
  state.backend?.close();
  await state.devnet?.close();
  if (state.token) rmSync(state.token.dir, { recursive: true, force: true });
});

// The suite needs the driver when it registers its tests; the transport resolves lazily.
const lazyFetch = ((input: string, init: RequestInit) => fetch(input.replace('http://devnet/', state.devnet?.url ?? ''), init)) as never;
const driver = createXrplDriver({ chains: { 'xrpl:local': { url: 'http://devnet/', networkId: 21337, fetch: lazyFetch } } });
const signer = createXrplSigner();
let counter = 0;

function fixture(curve: Curve): ConformanceFixture {
  const devnet = state.devnet as XrplDevnet;
  const keys = state.keys[curve].slice(0, 3);
  const members = keys.map((k, i) => ({ address: xrplAddressOf(k.publicKey, k.curve), curve: k.curve, weight: 1, label: `hsm-${i + 1}` }));
  const address = xrplAddressOf(createSoftwareKey().publicKey, 'ed25519');
  devnet.ledger.genesisAccount(address, 100_000_000n, { signers: members.map((m) => ({ account: m.address, weight: m.weight })), quorum: 2, flags: ACCOUNT_ROOT_FLAGS.lsfDisableMaster });
  const wallet: WalletDescriptor = { wallet: `hsm-${curve}-${++counter}`, chain: 'xrpl:local', control: { kind: 'native_multisig', address, signers: members, quorum: 2 } };
  const destination = xrplAddressOf(createSoftwareKey().publicKey, 'ed25519');
  devnet.ledger.genesisAccount(destination, 50_000_000n);
  return {
    chain: 'xrpl:local',
    wallet,
    keys,
    destination,
    invalidAddresses: [`${destination.slice(0, -1)}${destination.endsWith('a') ? 'b' : 'a'}`, destination.slice(0, 20), '0x52908400098527886E0F7030069857D2E4169EE7'],
    fundedAmount: devnet.ledger.xrpBalance(address).toString(),
    ledger: devnet.reader(),
    transferAmount: '1234',
    ...(curve === 'secp256k1' ? { outsider: state.keys.secp256k1[3] as SigningKey } : {}),
  };
}

for (const curve of ['ed25519', 'secp256k1'] as const) {
  describeChainDriver({
    name: `xrpl 2-of-3, every key a PKCS#11 ${curve} key in SoftHSM2`,
    driver,
    signer,
    setup: async () => fixture(curve),
    confirmIntervalMs: 50,
    confirmAttempts: 100,
  });
}
