#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to run and test Podscope (run as root). Idempotent and quick when
# everything is already there, so both README commands can start with it.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(runc crun conmon containernetworking-plugins busybox-static iptables iproute2 util-linux mount chromium chromium-headless-shell containerd conntrack nftables tcpdump dnsmasq-base iputils-ping python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Electron binary cannot be downloaded here (its installer fetches from outside the npm registry): skip it.
# `npm start` then uses browser mode. A stamp of the lockfile's hash avoids reinstalling on every run.
stamp=node_modules/.podscope-lock-hash
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: npm ci" >&2
  ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm ci --no-audit --no-fund >/dev/null
  echo "$want" > "$stamp"
fi

# `podscope` on PATH is this checkout's CLI (bin/podscope.mjs), as the README runs it: npx would add npm's own start-up
# (about 0.5 s) to every verb. Another file of that name is left alone. Then the CLI's build is made now, not by the
# first verb (bin/cli-cache.mjs keeps it current with the sources afterwards).
link=/usr/local/bin/podscope
if [ ! -e "$link" ] || { [ -L "$link" ] && [[ "$(readlink "$link")" == */bin/podscope.mjs ]]; }; then
  ln -sfn "$PWD/bin/podscope.mjs" "$link"
else
  echo "setup: $link exists and is not a link to a Podscope checkout: left alone; run ./bin/podscope.mjs instead" >&2
fi
node bin/podscope.mjs help >/dev/null
