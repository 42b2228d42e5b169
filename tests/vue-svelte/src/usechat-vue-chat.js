import { createApp } from "vue";
import ChatClass from "./ChatClass.vue";

createApp(ChatClass, { id: "vue-chat-class" }).mount("#app");
