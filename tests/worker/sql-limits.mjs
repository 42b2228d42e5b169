// A main module for the tests that stands in for Cloudflare's SQL limits
// on a SQLite-backed Durable Object, which local workerd does not enforce
// (it stores a 3 MB string): a string, BLOB or row of at most 2 MB, a
// statement of at most 100 KB, at most 100 bound parameters. The session
// object's storage throws past them as the platform's does; with the
// binding TEST_SQL_QUOTA, it is full once its inserts passed that many
// bytes.
export { default } from "./index.mjs";
import { SessionObject as Base } from "./session_object.mjs";

const ROW = 2_000_000;
const STATEMENT = 100_000;
const PARAMS = 100;
const enc = new TextEncoder();
const size = (v) => (typeof v === "string" ? enc.encode(v).length : v instanceof ArrayBuffer || ArrayBuffer.isView(v) ? v.byteLength : 8);

function limited(sql, quota) {
  let used = 0;
  return {
    exec(query, ...params) {
      if (size(query) > STATEMENT) throw new Error("SQLITE_TOOBIG: statement too long");
      if (params.length > PARAMS) throw new Error("too many SQL variables: SQLITE_ERROR");
      const n = params.reduce((n, p) => n + size(p), 0);
      if (n > ROW) throw new Error("string or blob too big: SQLITE_TOOBIG");
      if (query.startsWith("INSERT") && (used += n) > quota) throw new Error("database or disk is full: SQLITE_FULL");
      return sql.exec(query, ...params);
    },
    get databaseSize() {
      return sql.databaseSize;
    },
  };
}

export class SessionObject extends Base {
  constructor(ctx, env) {
    super(ctx, env);
    this.ctx = { storage: { sql: limited(ctx.storage.sql, Number(env.TEST_SQL_QUOTA ?? Infinity)) } };
  }
}
