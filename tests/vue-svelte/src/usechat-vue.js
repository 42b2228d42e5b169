import { createApp } from "vue";
import UseChat from "./UseChat.vue";
import { toggle } from "./usechat.js";

let app;
toggle({
  show: () => (app = createApp(UseChat, { id: "vue-usechat" })).mount("#app"),
  hide: () => app.unmount(),
});
