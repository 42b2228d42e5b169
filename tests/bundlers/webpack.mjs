// webpack 5 through its Node API, with no loaders or plugins: new
// URL("./floe.wasm", import.meta.url) is an asset by default. With
// --no-minimize the output is not minimized (Terser takes most of a
// build's processor time): bundlers.test.mjs's workspace build checks how
// the modules resolve, and its first build the minimized output.
import webpack from "webpack";

const compiler = webpack({
  mode: "production",
  entry: "./src/main.js",
  output: { path: new URL("./dist-webpack", import.meta.url).pathname, clean: true },
  performance: { hints: false },
  optimization: { minimize: !process.argv.includes("--no-minimize") },
});
compiler.run((err, stats) => {
  if (err || stats.hasErrors()) {
    console.error(err ?? stats.toString({ colors: false, all: false, errors: true, warnings: true }));
    process.exit(1);
  }
  console.log(stats.toString({ colors: false, all: false, assets: true, warnings: true }));
  compiler.close(() => {});
});
