#!/usr/bin/env bash
# Installs code-server (a real VS Code, from npm) for the extension's end-to-end test,
# into a cache folder outside git, and prints the path of its `code-server` executable.
#
#   editors/vscode/scripts/install-code-server.sh    # -> .../node_modules/.bin/code-server
#
# Idempotent: a second run with the same package-lock.json does nothing (a stamp file
# holds the lock's hash). The folder is $PROMPTMILL_CODE_SERVER_CACHE, default
# ~/.cache/promptmill/code-server.
#
# Why each step (seen on Debian 12 with Node 20):
# - code-server 4.100.x is the last release that runs on Node 20 (newer ones need Node 22/24);
#   the version is pinned in scripts/code-server/package.json and package-lock.json.
# - its install runs scripts that download a ripgrep binary from GitHub (@vscode/ripgrep),
#   which this network does not reach: npm runs with --ignore-scripts, and Debian's
#   `ripgrep` (/usr/bin/rg) is linked where @vscode/ripgrep's binary would be;
# - the native modules are built afterwards with `npm rebuild` (node-gyp, from the headers
#   of the running Node); kerberos needs Debian's libkrb5-dev.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${PROMPTMILL_CODE_SERVER_CACHE:-$HOME/.cache/promptmill/code-server}"
log() { echo "install-code-server: $*" >&2; }

major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" != 20 ] && [ "$major" != 22 ]; then
    log "warning: Node $(node --version); code-server 4.100 is built for Node 20"
fi

missing=()
command -v rg >/dev/null || missing+=(ripgrep)
[ -e /usr/include/krb5.h ] || [ -e /usr/include/krb5/krb5.h ] || missing+=(libkrb5-dev)
command -v make >/dev/null || missing+=(make)
command -v g++ >/dev/null || missing+=(g++)
if [ "${#missing[@]}" -gt 0 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    log "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

stamp="$cache/.installed"
want="$(cat "$here/code-server/package.json" "$here/code-server/package-lock.json" | sha256sum | cut -d' ' -f1)-$(node --version)"
bin="$cache/node_modules/.bin/code-server"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$bin" ]; then
    echo "$bin"
    exit 0
fi

mkdir -p "$cache"
rm -f "$stamp"
cp "$here/code-server/package.json" "$here/code-server/package-lock.json" "$cache/"
cd "$cache"
log "npm ci --ignore-scripts (code-server $(node -p 'require("./package.json").dependencies["code-server"]'))"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2

cs="$cache/node_modules/code-server"
# code-server's postinstall.sh, step by step, with scripts off: its VS Code's dependencies
# (lib/vscode, from its npm-shrinkwrap.json), the links it makes, the built-in extensions' ones
log "npm install --omit=dev --ignore-scripts in code-server's lib/vscode and lib/vscode/extensions"
(cd "$cs/lib/vscode" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
ln -sfn node_modules "$cs/lib/vscode/node_modules.asar"
(cd "$cs/lib/vscode/bin/remote-cli" && ln -sf code-linux.sh code-server)
(cd "$cs/lib/vscode/bin/helpers" && ln -sf browser-linux.sh browser.sh)
(cd "$cs/lib/vscode/extensions" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)

# ripgrep: Debian's binary where @vscode/ripgrep looks for its own
find "$cache/node_modules" "$cs/lib/vscode/node_modules" -type d -path '*/@vscode/ripgrep' -prune | while read -r rgdir; do
    mkdir -p "$rgdir/bin"
    ln -sf "$(command -v rg)" "$rgdir/bin/rg"
done

# the native modules, built here for this Node (never a prebuilt binary: --build-from-source;
# node-pty's script runs `npx node-gyp`, which npm fetches: yes)
log "npm rebuild of the native modules (a few minutes)"
rebuild() { # rebuild DIR MODULE...: those of the modules installed under DIR/node_modules
    local dir="$1" m mods=()
    shift
    for m in "$@"; do
        [ -d "$dir/node_modules/$m" ] && mods+=("$m")
    done
    if [ "${#mods[@]}" -gt 0 ]; then
        log "  in ${dir#"$cache"}: ${mods[*]}"
        (cd "$dir" && npm_config_build_from_source=true npm_config_yes=true npm rebuild --no-audit --no-fund --loglevel=error "${mods[@]}" >&2)
    fi
}
rebuild "$cache" argon2
rebuild "$cs/lib/vscode" node-pty kerberos @parcel/watcher @vscode/spdlog native-watchdog @vscode/deviceid

"$bin" --version >&2
echo "$want" >"$stamp"
echo "$bin"
