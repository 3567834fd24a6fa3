# gmmscored in a container: built on the CUDA devel image, run on the matching runtime image as a
# non-root user, with a gRPC health check; or, with BACKEND=cpu, built and run on plain Ubuntu for
# machines without a GPU. The build steps live in deploy/docker-build-steps.sh, which the test
# suite runs as well (test server_docker_build_steps), so they cannot rot here.
#
#   docker build -t gmmscored .                                  # CUDA (and CPU) backends
#   docker build --build-arg BACKEND=cpu -t gmmscored-cpu .      # CPU backend only
#   docker run --gpus all -p 50051:50051 -p 9090:9090 gmmscored  # (no --gpus with -cpu)
#
# With no arguments the container serves the shipped Kaldi monophone model as "mono" and its front
# end as "mfcc" (tests/data/kaldi-mono, deploy/kaldi-mono), so that `gmmscore stream --model mono`
# and audio streams with `--front-end mfcc` work at once. Your own models:
#   docker run --gpus all -p 50051:50051 -p 9090:9090 -v /srv/models:/models:ro gmmscored \
#       --listen=0.0.0.0:50051 --metrics-listen=0.0.0.0:9090 --plaintext \
#       --model-root=/models --model=mono=/models/final.mdl --backend=auto
#
# Arguments replace the default CMD as a whole. With TLS, set GMMSCORE_HEALTH_FLAGS (docker run
# -e) to what `gmmscore health` needs to reach the server, e.g. "--server=127.0.0.1:50051
# --ca-cert=/certs/ca.crt --server-name=gmmscore.example".
ARG CUDA_VERSION=13.0.0
ARG UBUNTU=ubuntu24.04
ARG CPU_IMAGE=ubuntu:24.04
# cuda: build with nvcc, run on the CUDA runtime image; cpu: build and run on CPU_IMAGE.
ARG BACKEND=cuda

FROM nvidia/cuda:${CUDA_VERSION}-devel-${UBUNTU} AS build-base-cuda
FROM ${CPU_IMAGE} AS build-base-cpu
FROM nvidia/cuda:${CUDA_VERSION}-runtime-${UBUNTU} AS run-base-cuda
FROM ${CPU_IMAGE} AS run-base-cpu

FROM build-base-${BACKEND} AS build
ENV DEBIAN_FRONTEND=noninteractive
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
RUN /src/scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . /src
# Warnings stay errors in development and CI; a release image built with this image's newer
# compiler should not fail on warnings that compiler adds.
RUN GMMSCORE_CMAKE_ARGS=-DGMMSCORE_WERROR=OFF \
    /src/deploy/docker-build-steps.sh all /src /build /opt/gmmscore

FROM run-base-${BACKEND}
COPY --from=build /opt/gmmscore /opt/gmmscore
COPY tests/data/kaldi-mono/final.mdl deploy/kaldi-mono/mfcc.conf /opt/gmmscore/share/kaldi-mono/
# OMP_WAIT_POLICY: the CPU backend's OpenMP threads sleep between batches instead of spinning,
# which leaves the cores to gRPC (libgomp reads it before main, so it is set here).
ENV PATH=/opt/gmmscore/bin:${PATH} \
    LD_LIBRARY_PATH=/opt/gmmscore/lib:${LD_LIBRARY_PATH} \
    OMP_WAIT_POLICY=PASSIVE \
    GMMSCORE_HEALTH_FLAGS="--plaintext --server=127.0.0.1:50051"
# The bundle must load on this image alone: --help fails here if a library is missing.
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin gmmscore \
    && mkdir -p /models \
    && gmmscored --help >/dev/null
USER 10001
EXPOSE 50051 9090
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
    CMD gmmscore health ${GMMSCORE_HEALTH_FLAGS} || exit 1
# SIGTERM drains: streams get their in-flight windows, then UNAVAILABLE (--drain-timeout, 30 s;
# give `docker stop -t` / terminationGracePeriodSeconds more than that).
STOPSIGNAL SIGTERM
ENTRYPOINT ["gmmscored"]
CMD ["--listen=0.0.0.0:50051", "--metrics-listen=0.0.0.0:9090", "--model-root=/models", "--plaintext", \
     "--model=mono=/opt/gmmscore/share/kaldi-mono/final.mdl", \
     "--front-end=mfcc=/opt/gmmscore/share/kaldi-mono/mfcc.conf"]
