/**
 * @module control-plane/postgres/schema
 * The control plane's PostgreSQL schema, applied by `vault-control-plane migrate` (never at
 * start-up: `serve` refuses a database that is behind and names the command).
 *
 * - `cp_lease`: the one writer's lease. `token` goes up at every takeover and is the fencing token
 *   every receipt carries; `expires_at` is on the database's clock, so instances' clocks need not agree.
 * - `cp_log`: every group commit, in order, as the batch each instance's replica applies. Its
 *   primary key is the second fence: two writers can never both append entry n.
 * - `cp_receipts`, `cp_intents`, `cp_events`: the same data as tables to query with SQL.
 * - `cp_log.sig` (3): the receipt key's signature over each entry's seq and text (store.ts
 *   logEntryDigest), checked by every replica before it applies the entry.
 * - `cp_webhook_progress` (2): per webhook endpoint, the seq at and below which every event is
 *   delivered or dead-lettered, written by the writer (fenced), read by the next one at takeover.
 */
import type { Migration, MigrationSet } from '@vault/sdk';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'lease, log, receipts, intents, events',
    sql: `
      CREATE TABLE cp_lease (
        name text PRIMARY KEY,
        holder text NOT NULL,
        token bigint NOT NULL CHECK (token >= 0),
        expires_at timestamptz NOT NULL,
        url text NOT NULL
      );
      INSERT INTO cp_lease (name, holder, token, expires_at, url) VALUES ('writer', '', 0, 'epoch', '');
      CREATE TABLE cp_log (
        seq bigint PRIMARY KEY CHECK (seq >= 1),
        fence bigint NOT NULL CHECK (fence >= 1),
        at bigint NOT NULL,
        batch text NOT NULL
      );
      CREATE TABLE cp_receipts (
        seq bigint PRIMARY KEY CHECK (seq >= 0),
        hash text NOT NULL UNIQUE,
        prev text NOT NULL,
        fence bigint NOT NULL,
        kind text NOT NULL,
        intent_id text,
        record jsonb NOT NULL
      );
      CREATE INDEX cp_receipts_intent ON cp_receipts (intent_id, seq) WHERE intent_id IS NOT NULL;
      CREATE TABLE cp_intents (
        intent_id text PRIMARY KEY,
        n bigint NOT NULL UNIQUE,
        wallet text NOT NULL,
        status text NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        record jsonb NOT NULL
      );
      CREATE INDEX cp_intents_wallet ON cp_intents (wallet, created_at);
      CREATE INDEX cp_intents_status ON cp_intents (status);
      CREATE TABLE cp_events (
        seq bigint PRIMARY KEY CHECK (seq >= 1),
        type text NOT NULL,
        event jsonb NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'webhook delivery progress',
    sql: `
      CREATE TABLE cp_webhook_progress (
        endpoint_id text PRIMARY KEY,
        low_water bigint NOT NULL CHECK (low_water >= -1),
        fence bigint NOT NULL CHECK (fence >= 1),
        updated_at bigint NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'log entry signatures',
    // Added after: entries written before have none, and a replica refuses an entry without one.
    sql: `ALTER TABLE cp_log ADD COLUMN sig text;`,
  },
];

export const CONTROL_PLANE_SCHEMA: MigrationSet = {
  product: 'control plane',
  table: 'cp_schema_migrations',
  // "cp" and a version of the lock's meaning; any constant distinct from agent-search's.
  lockKey: 0x63700001,
  migrations: MIGRATIONS,
};
