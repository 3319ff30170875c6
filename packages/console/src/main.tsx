import "@radix-ui/themes/styles.css";
import "./console.css";
import { Theme } from "@radix-ui/themes";
import { setNonce } from "get-nonce";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";

// The page's style nonce (the server makes one per load and allows it in its CSP): the style
// elements Radix's scroll lock inserts take it from here.
const nonce = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce;
if (nonce) setNonce(nonce);

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <StrictMode>
      <Theme accentColor="indigo" grayColor="slate" radius="medium" scaling="100%">
        <App />
      </Theme>
    </StrictMode>,
  );
