// The page that uses store.js's session: it accepts hot updates (its own
// and store.js's), and closes the old session in its dispose, which Vite
// calls for the module that accepts an update (not for store.js).
import { session } from "./store.js";
import { events } from "./shared.js";

window.send = async (prompt) => {
  try {
    let last;
    for await (const m of session.run(prompt)) {
      if (!last) events.push(`running ${prompt}`);
      last = m;
    }
    events.push(`ended ${prompt} ${last.payload.type}`);
  } catch (e) {
    events.push(`failed ${prompt} ${e.code}`);
  }
};

if (import.meta.hot) {
  import.meta.hot.accept();
  import.meta.hot.dispose(() => session.close());
}
