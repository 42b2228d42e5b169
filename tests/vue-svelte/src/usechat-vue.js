import { createApp } from "vue";
import UseChat from "./UseChat.vue";

createApp(UseChat, { id: "vue-usechat" }).mount("#app");
