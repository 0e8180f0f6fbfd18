"""The floor of the plan row in `make bench`: read the same stream and build the planner's
model of it (queues, Workloads), without scheduling anything."""
import sys

from generator.plan import overlay

source, objs = overlay.load_objects(sys.argv[1])
cluster = overlay.build(source, objs)
print(len(cluster.owners))
