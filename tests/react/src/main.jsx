import { StrictMode, useState } from "react";
import { createRoot } from "react-dom/client";
import { Chat } from "./Chat.jsx";

function App() {
  const [page, setPage] = useState("chat");
  return (
    <>
      <nav>
        <button onClick={() => setPage("chat")}>Chat</button>
        <button onClick={() => setPage("about")}>About</button>
      </nav>
      {page === "chat" ? <Chat id="react-chat" /> : <p>About this demo.</p>}
    </>
  );
}

createRoot(document.getElementById("root")).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
