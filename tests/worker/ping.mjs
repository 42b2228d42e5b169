// A main module for the test of the heartbeat (T-11): the session object
// pings its streams every TEST_PING_MS milliseconds rather than every
// 20 s, through its option pingMs, which no variable of the Worker sets.
export { default } from "./index.mjs";
import { SessionObject as Base } from "./session_object.mjs";

export class SessionObject extends Base {
  options() {
    return { ...super.options(), pingMs: Number(this.env.TEST_PING_MS) };
  }
}
