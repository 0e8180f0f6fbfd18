"""The floor of the plan row in `make bench`: read the same stream and build the planner's
model of it (queues, Workloads), without scheduling anything."""
import sys

from generator.plan import model

source, objs = model.load_objects(sys.argv[1])
cluster = model.build(source, objs)
print(len(cluster.owners))
