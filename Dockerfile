# Home Assistant add-on image: a static Go binary on a Debian-based HA base
# image with Chromium, Node.js and the Playwright driver laid out exactly as
# scripts/setup.sh lays it out for the tests (so what the tests run is what ships).
ARG BUILD_FROM=ghcr.io/home-assistant/amd64-base-debian:bookworm

# --- build stage -----------------------------------------------------------
FROM golang:1.26-bookworm AS build
ARG BUILD_VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${BUILD_VERSION}" \
      -o /out/gemini-supply ./cmd/gemini-supply

# --- runtime stage ---------------------------------------------------------
FROM ${BUILD_FROM}
# Must equal the driver version playwright-go (go.mod) requires; checked by make test.
ARG PLAYWRIGHT_DRIVER_VERSION=1.52.0

RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      chromium fonts-liberation fonts-noto-color-emoji nodejs npm ca-certificates \
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
