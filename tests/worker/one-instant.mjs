// A main module for the test of the session list's order: the object
// "index" stores every session it adds as made at one instant, the binding
// TEST_CREATED_MS (its INSERT's time pinned), as sessions made in the same
// millisecond are.
export { default } from "./index.mjs";
import { SessionObject as Base } from "./session_object.mjs";

export class SessionObject extends Base {
  constructor(ctx, env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    const at = Number(env.TEST_CREATED_MS);
    const pinned = {
      exec(query, ...params) {
        if (/^INSERT\b.*\bfloe_sessions\b/s.test(query)) params = params.map((p) => (typeof p === "number" ? at : p));
        return sql.exec(query, ...params);
      },
      get databaseSize() {
        return sql.databaseSize;
      },
    };
    this.ctx = { storage: { sql: pinned } };
  }
}
