// A main module for the test of a session list the storage refuses: the
// object "index" throws at each write to the list, as a full database
// does; the sessions' own storage takes their writes.
export { default } from "./index.mjs";
import { SessionObject as Base } from "./session_object.mjs";

export class SessionObject extends Base {
  constructor(ctx, env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    const full = {
      exec(query, ...params) {
        if (/^(INSERT|DELETE)\b.*\bfloe_sessions\b/s.test(query)) throw new Error("database or disk is full: SQLITE_FULL");
        return sql.exec(query, ...params);
      },
      get databaseSize() {
        return sql.databaseSize;
      },
    };
    this.ctx = { storage: { sql: full } };
  }
}
