# invariant-serve container image.
#
# Stages:
#   builder           compiles the Release binaries from the repository (no tests,
#                     no benchmarks, no training) and stages them in /out.
#   runtime-base      debian:bookworm-slim + the shared libraries only
#                     (deploy/install-deps.sh --runtime: permissive licences
#                     only, KissFFT and no FFTW; README "Licences"), non-root user, ports,
#                     healthcheck, entrypoint. Holds no binaries.
#   runtime-prebuilt  runtime-base + binaries taken from the build context under
#                     prebuilt/bin (and configs under prebuilt/configs). Used by
#                     deploy/container-test.sh --prebuilt to package binaries the
#                     host already built, without recompiling in the image.
#   runtime (default) runtime-base + the binaries compiled by the builder stage.
#
#   docker build -t invariant-serve .                # full build (default target)
#   podman build --format=docker -t invariant-serve .
#
# The server reads model bundles from /models/<name>/<version>/ (a VOLUME); the
# gRPC port is 8500, the Open Inference Protocol's HTTP/JSON port 8501 and the
# Prometheus metrics port 9100.

ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS builder
WORKDIR /src
# Dependencies first: this layer is reused as long as the script is unchanged.
COPY deploy/install-deps.sh /src/deploy/install-deps.sh
RUN deploy/install-deps.sh --build && rm -rf /var/lib/apt/lists/*
COPY . /src
ARG BUILD_JOBS=
# KissFFT (BSD-3-Clause), the default FFT: the image links no GPL library
# (FFTW, -DINVARIANT_FFT=FFTW, would need libfftw3-single3 in runtime-base).
RUN cmake -S /src -B /src/build-image -G Ninja -DCMAKE_BUILD_TYPE=Release -DINVARIANT_FFT=KISSFFT \
      -DINVARIANT_BUILD_TESTS=OFF -DINVARIANT_BUILD_BENCH=OFF -DINVARIANT_BUILD_PYTHON=OFF \
 && cmake --build /src/build-image -j"${BUILD_JOBS:-$(nproc)}" \
 && mkdir -p /out/bin /out/configs \
 && for b in invariant-server invariant-client invariant-train invariant-loadgen; do \
      if [ -x "/src/build-image/bin/$b" ]; then cp "/src/build-image/bin/$b" /out/bin/; fi; \
    done \
 && if [ -d /src/train/configs ]; then cp -r /src/train/configs/. /out/configs/; fi \
 && test -x /out/bin/invariant-server && test -x /out/bin/invariant-client \
 && ls -l /out/bin /out/configs

FROM ${BASE_IMAGE} AS runtime-base
COPY deploy/install-deps.sh /tmp/install-deps.sh
RUN /tmp/install-deps.sh --runtime && rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh \
 && groupadd --system --gid 10001 invariant \
 && useradd --system --uid 10001 --gid invariant --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin invariant \
 && mkdir -p /models /etc/invariant/train && chown invariant:invariant /models
USER 10001:10001
WORKDIR /models
VOLUME ["/models"]
EXPOSE 8500 8501 9100
# INVARIANT_GRPC_PORT: set it when you pass another --port to the server.
ENV INVARIANT_GRPC_PORT=8500
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["/bin/sh", "-c", "exec /usr/local/bin/invariant-client health --target=127.0.0.1:${INVARIANT_GRPC_PORT}"]
ENTRYPOINT ["/usr/local/bin/invariant-server"]
CMD ["--models=/models", "--port=8500", "--http_port=8501", "--metrics_port=9100"]

FROM runtime-base AS runtime-prebuilt
COPY prebuilt/bin/ /usr/local/bin/
COPY prebuilt/configs/ /etc/invariant/train/
# Fail the build if any binary needs a library the runtime packages lack.
RUN ! ldd /usr/local/bin/invariant-* | grep "not found"

FROM runtime-base AS runtime
# Copying directories (not named files) keeps this robust to optional binaries
# such as invariant-loadgen being absent.
COPY --from=builder /out/bin/ /usr/local/bin/
COPY --from=builder /out/configs/ /etc/invariant/train/
RUN ! ldd /usr/local/bin/invariant-* | grep "not found"
