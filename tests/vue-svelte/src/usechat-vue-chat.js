import { createApp } from "vue";
import ChatClass from "./ChatClass.vue";
import { toggle } from "./usechat.js";

let app;
toggle({
  show: () => (app = createApp(ChatClass, { id: "vue-chat-class" })).mount("#app"),
  hide: () => app.unmount(),
});
