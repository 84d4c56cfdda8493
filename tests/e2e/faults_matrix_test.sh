# The short run of scripts/fault-matrix (docs/guarantees.md publishes the long one): two runs
# of 5 s for each of a few of its cells, among those no other test covers — a queue under a
# paused server, a rate limit under clients whose wall clocks jump an hour, a gate under a
# partition, a Redlock one of whose three servers loses its data, a semaphore whose slot
# migrates to another master of a Cluster. It fails when a model finds an anomaly where the
# docs claim safety: everywhere in these cells but two holds of the Redlock at once, which a
# node that lost its data allows (its fences must still increase).
root=$(cd "$(dirname "$0")/../.." && pwd)
exec "$root/scripts/fault-matrix" --check --runs 2 --seconds 5 --cells "queue:server-pause
  limit:clock-jump gate:partition redlock:redlock-minority sem:slot-migration"
