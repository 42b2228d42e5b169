import { mount, unmount } from "svelte";
import UseChat from "./UseChat.svelte";
import { toggle } from "./usechat.js";

let chat;
toggle({
  show: () => (chat = mount(UseChat, { target: document.getElementById("app"), props: { id: "svelte-usechat" } })),
  hide: () => unmount(chat),
});
