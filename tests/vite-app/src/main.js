// The package as a user imports it. scripted.mjs is copied here from
// tests/browser/fixtures by the package test before the build.
import { load } from "@floehq/floe";
import { runScripted } from "./scripted.mjs";

window.floeResult = runScripted(load);
