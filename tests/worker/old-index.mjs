// A main module for the test of a session list a version before made: the
// object "index" finds the table of that version (no column pending)
// holding the session "old" before its first request.
export { default } from "./index.mjs";
import { SessionObject as Base } from "./session_object.mjs";

export class SessionObject extends Base {
  async fetch(request) {
    if (new URL(request.url).pathname.startsWith("/_index/") && !this.seeded) {
      this.seeded = true;
      const sql = this.ctx.storage.sql;
      sql.exec("CREATE TABLE IF NOT EXISTS floe_sessions (id TEXT PRIMARY KEY, created INTEGER NOT NULL)");
      sql.exec("INSERT OR IGNORE INTO floe_sessions (id, created) VALUES ('old', 0)");
    }
    return super.fetch(request);
  }
}
