"""Your own cdk8s constructs, in the generator's app (https://cdk8s.io; docs/constructs.md).

synth calls build() after the generator's objects are in the app: `charts` holds the chart of
each output folder ("base", "overlays/<profile>"), `spec` the typed spec (read-only). Add any
cdk8s construct to a chart, or patch a generated object:

    from generator.builders.user import find
    find(chart, "Deployment", "NAME").add_json_patch(cdk8s.JsonPatch.add("/spec/revisionHistoryLimit", 3))

Your objects get the generator's pod hardening and checks (pods must run as non-root)."""
import cdk8s_plus_33.k8s as k8s


def build(app, charts, spec):
    """One ConfigMap in every overlay naming the platform and the profile."""
    namespace = spec.namespaces[0].name
    for folder, chart in charts.items():
        if folder.startswith("overlays/"):
            k8s.KubeConfigMap(chart, "platform-info",
                              metadata=k8s.ObjectMeta(name="platform-info", namespace=namespace),
                              data={"platform": spec.name, "profile": folder.split("/", 1)[1]})
