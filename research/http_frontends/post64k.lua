-- wrk script for research/http_frontends/compare.sh: POST a 64 KiB body.
wrk.method = "POST"
wrk.body = string.rep("a", 65536)
wrk.headers["Content-Type"] = "application/octet-stream"
