// Radix Themes' styles in parts: the base tokens and only the color scales the console uses
// (the whole styles.css carries all 30: 86 kB gzipped against about 60 kB for these).
import "@radix-ui/themes/tokens/base.css";
import "@radix-ui/themes/tokens/colors/amber.css";
import "@radix-ui/themes/tokens/colors/gray.css";
import "@radix-ui/themes/tokens/colors/green.css";
import "@radix-ui/themes/tokens/colors/indigo.css";
import "@radix-ui/themes/tokens/colors/red.css";
import "@radix-ui/themes/tokens/colors/slate.css";
import "@radix-ui/themes/components.css";
import "@radix-ui/themes/utilities.css";
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
