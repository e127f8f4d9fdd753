/** Types of scripts/postgres.mjs (plain Node ESM, imported by TypeScript tests). */
export interface RunningPostgres {
  /** postgres://postgres:<password>@127.0.0.1:<port>/postgres */
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  /** The temp directory holding the cluster (removed by stop()). */
  dir: string;
  pid: number;
  /** Fast shutdown, then the directory is removed. Idempotent. */
  stop(): Promise<void>;
}
export declare function postgresBinaries(): Promise<{ initdb: string; postgres: string }>;
/** fsync: off unless true (the benches turn it on to compare durable commits). */
export declare function startPostgres(options?: { log?: (line: string) => void; fsync?: boolean }): Promise<RunningPostgres>;
