// Vite bundles imported CSS files into the build's stylesheet.
declare module "*.css";
