# Home Assistant app (add-on) image: a static Go binary on a Debian-based HA
# base image with Chromium, Node.js and the Playwright driver laid out exactly
# as scripts/setup.sh lays it out for the tests (so what the tests run is what
# ships).
#
# This file is the single source of truth for the build (Home Assistant retired
# its builder and build.yaml in April 2026): `docker buildx build --platform
# linux/arm64` (or a Supervisor building on a Raspberry Pi / Green / Yellow)
# picks the aarch64 base through BuildKit's TARGETARCH, linux/amd64 the amd64
# one. internal/addon's TestDockerfileBaseForEachArch resolves both.
ARG TARGETARCH
ARG BUILD_VERSION=dev

# --- runtime base per architecture (BuildKit's TARGETARCH names) -------------
FROM ghcr.io/home-assistant/amd64-base-debian:bookworm AS base-amd64
LABEL io.hass.arch="amd64"
FROM ghcr.io/home-assistant/aarch64-base-debian:bookworm AS base-arm64
LABEL io.hass.arch="aarch64"

# --- build stage -----------------------------------------------------------
# The Go compiler runs on the build machine's platform and cross-compiles
# (CGO off) for the target: no emulation for the slow part.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
ARG BUILD_VERSION
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
RUN CGO_ENABLED=0 GOOS=linux GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w -X main.version=${BUILD_VERSION}" \
      -o /out/gemini-supply ./cmd/gemini-supply

# --- runtime stage ---------------------------------------------------------
FROM base-${TARGETARCH}
ARG BUILD_VERSION
# The labels Home Assistant's builder used to add (io.hass.arch is set by the
# base stage above).
LABEL io.hass.name="Gemini Supply" \
      io.hass.description="Fills your online grocery cart from your shopping list with a Gemini Computer Use agent" \
      io.hass.type="addon" \
      io.hass.version="${BUILD_VERSION}" \
      io.hass.url="https://github.com/gemini-supply/gemini-supply" \
      org.opencontainers.image.title="Gemini Supply" \
      org.opencontainers.image.description="Fills your online grocery cart from your shopping list with a Gemini Computer Use agent" \
      org.opencontainers.image.source="https://github.com/gemini-supply/gemini-supply" \
      org.opencontainers.image.version="${BUILD_VERSION}"
# Must equal the driver version playwright-go (go.mod) requires; checked by make test.
ARG PLAYWRIGHT_DRIVER_VERSION=1.52.0

RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      chromium chromium-headless-shell fonts-liberation fonts-noto-color-emoji nodejs npm ca-certificates \
 && mkdir -p /opt/playwright-driver \
 && cd /tmp \
 && npm pack --silent "playwright-core@${PLAYWRIGHT_DRIVER_VERSION}" \
 && tar -xzf playwright-core-*.tgz -C /opt/playwright-driver \
 && echo "${PLAYWRIGHT_DRIVER_VERSION}" > /opt/playwright-driver/VERSION \
 && ln -s /usr/bin/node /opt/playwright-driver/node \
 && rm -f /tmp/playwright-core-*.tgz \
 && apt-get purge -y npm && apt-get autoremove -y \
 && rm -rf /var/lib/apt/lists/* /root/.npm

ENV PLAYWRIGHT_DRIVER_PATH=/opt/playwright-driver \
    PLAYWRIGHT_NODEJS_PATH=/usr/bin/node \
    GEMINI_SUPPLY_BROWSER_EXECUTABLE=/usr/lib/chromium/chromium

COPY rootfs /
COPY --from=build /out/gemini-supply /usr/bin/gemini-supply
