// Types of connect.mjs: the remote client alone, which needs no WebAssembly
// (import { connect } from "@floehq/floe/connect.mjs"). It exports connect
// only; the types are floe.d.ts's.
export { connect } from "./floe.js";
export type {
  ConnectOptions,
  RemoteSession,
  RemoteRunOptions,
  RemoteMessagesOptions,
  RemoteHistory,
  RemoteError,
  MessageStream,
  OmniMessage,
  ToolCallMessage,
} from "./floe.js";
