import { mount } from "svelte";
import UseChat from "./UseChat.svelte";

mount(UseChat, { target: document.getElementById("app"), props: { id: "svelte-usechat" } });
