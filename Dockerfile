# cgstat's image: a build stage that builds cgstat as the README does, and a slim Debian 12
# runtime stage with cgstat's .deb (the binary, its libraries, the man page, the Grafana
# dashboard) and dygraphs for `cgstat report`. Runs as nobody; the binary carries the two
# capabilities it needs as file capabilities, which a non-root user gets when the container is
# given them (--cap-add). How to run it: README.md, "In a container"; contrib/kubernetes/ for a
# cluster.
#
#   docker build --network host -t cgstat .
ARG DEBIAN=debian:bookworm-slim

FROM ${DEBIAN} AS build
COPY . /src
WORKDIR /src
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		$(cat packages.txt) && \
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo && \
	cmake --build build -j"$(nproc)" --target cgstat && \
	cd build && cpack -G DEB

FROM ${DEBIAN}
COPY --from=build /src/build/cgstat_*.deb /tmp/
# The man page is cgstat's own documentation: kept, where -slim leaves man pages out (dpkg reads
# dpkg.cfg.d in order and the last match wins, so after -slim's "docker"). setcap is used once
# and removed with what it pulled in. The capabilities are permitted, not effective: execve()
# grants those the engine allows and never fails for the others; cgstat raises what it needs.
RUN echo "path-include /usr/share/man/man1/cgstat.1*" >/etc/dpkg/dpkg.cfg.d/zz-cgstat && \
	mkdir -p /usr/share/man/man1 && \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		/tmp/cgstat_*.deb libjs-dygraphs libcap2-bin && \
	setcap cap_bpf,cap_perfmon,cap_sys_admin=p /usr/bin/cgstat && \
	DEBIAN_FRONTEND=noninteractive apt-get purge -y --auto-remove libcap2-bin && \
	rm -rf /tmp/cgstat_*.deb /var/lib/apt/lists/* /var/cache/apt/*.bin
USER 65534:65534
WORKDIR /tmp
ENTRYPOINT ["/usr/bin/cgstat"]
CMD ["--help"]
