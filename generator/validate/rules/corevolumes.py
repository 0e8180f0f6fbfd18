"""The API server's validation of a pod spec's volumes, ported from Kubernetes v1.31.1
pkg/apis/core/validation/validation.go: ValidateVolumes, validateVolumeSource and the
validate*VolumeSource function of every source (the field paths are upstream's, misspellings
included: `persistentDisk` for gcePersistentDisk, `downwarAPI`). Same conventions as corepod.py.
`validate_volumes` returns the volumes the containers may mount (name -> source key):
upstream leaves out a volume with errors, so its mounts are reported Not found (AS004)."""
from __future__ import annotations

import re

from .. import apierrors as E
from .corepod import (
    _dict,
    _int,
    _list,
    _str,
    validate_local_descending_path,
    validate_object_field_selector,
    validate_resource_field_selector,
)
from .corespec import validate_label_selector

VOLUME = "AS140"
FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
_LUN = E.inclusive_range(0, 255)
# validVolumeDownwardAPIFieldPathExpressions.
VOLUME_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid")
_HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket")

# validateVolumeSource's sources in its order, with the path its checker is given when it differs.
SOURCES = ("emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs", "iscsi",
           "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte", "downwardAPI", "fc",
           "flexVolume", "configMap", "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume",
           "azureDisk", "storageos", "projected", "scaleIO", "csi", "ephemeral")
_FORBID_PATH = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}
_CHECK_PATH = {"gcePersistentDisk": "persistentDisk"}
# Sources whose checker only requires some fields to be set (the name upstream reports).
_REQUIRED = {
    "glusterfs": ("endpoints", "path"), "rbd": ("monitors", "image"), "cinder": ("volumeID",),
    "cephfs": ("monitors",), "vsphereVolume": ("volumePath",), "photonPersistentDisk": ("pdID",),
    "portworxVolume": ("volumeID",), "scaleIO": ("gateway", "system", "volumeName"),
    "azureFile": ("secretName", "shareName"), "persistentVolumeClaim": ("claimName",),
    "gitRepo": ("repository",), "awsElasticBlockStore": ("volumeID",), "gcePersistentDisk": ("pdName",),
    "nfs": ("server", "path"), "iscsi": ("targetPortal", "iqn"), "flexVolume": ("driver",),
    "azureDisk": ("diskName", "diskURI"), "secret": ("secretName",), "configMap": ("name",),
}


def validate_volumes(spec: dict, base: tuple, pod_name: str, out: list) -> dict:
    """ValidateVolumes and validateVolumeSource."""
    vols: dict = {}
    names: set = set()
    created = {f"{pod_name}-{_dict(v).get('name')}" for v in _list(spec.get("volumes"))
               if pod_name and isinstance(v, dict) and v.get("ephemeral") is not None}
    for i, v in enumerate(_list(spec.get("volumes"))):
        if not isinstance(v, dict):
            continue
        at = base + ("volumes", i)
        errs: list = []
        kind = _volume_source(v, at, pod_name, errs)
        name = v.get("name")
        if name == "":
            errs.append((VOLUME, at + ("name",), E.required()))
        elif isinstance(name, str):
            errs.extend((VOLUME, at + ("name",), E.invalid(name, m)) for m in E.is_dns1123_label(name))
        # A repeated name is AS001's sibling AS004's; upstream also leaves the volume out.
        if not errs and name not in names:
            vols[name] = kind
        names.add(name)
        out.extend(errs)
        claim = _dict(v.get("persistentVolumeClaim")).get("claimName")
        if claim in created:
            out.append((VOLUME, at + ("persistentVolumeClaim", "claimName"),
                        E.invalid(claim, "must not reference a PVC that gets created for an ephemeral volume")))
    return vols


def _volume_source(v, at, pod_name, out) -> str | None:
    first = None
    for kind in SOURCES:
        src = v.get(kind)
        if src is None:
            continue
        if first is not None:
            out.append((VOLUME, at + (_FORBID_PATH.get(kind, kind),), E.forbidden("may not specify more than 1 "
                                                                                  "volume type")))
            continue
        first = kind
        if isinstance(src, dict):
            _source(kind, src, at + (_CHECK_PATH.get(kind, kind),), out)
            _source_extra(kind, src, v, at, pod_name, out)
    # No source: SetDefaults_Volume (pkg/apis/core/v1/defaults.go) makes it an emptyDir before
    # validation, so "must specify a volume type" never reaches a v1 client.
    return first or "emptyDir"


def _source(kind, src, at, out):
    for key in _REQUIRED.get(kind, ()):
        field = {"endpoints": "endpoints", "monitors": "monitors", "image": "image", "diskURI": "diskURI"}.get(key, key)
        if not src.get(field):
            out.append((VOLUME, at + (key,), E.required()))
    check = _CHECKS.get(kind)
    if check:
        check(src, at, out)


def _empty_dir(src, at, out):
    limit = src.get("sizeLimit")
    if isinstance(limit, (str, int)) and str(limit).startswith("-"):
        out.append((VOLUME, at + ("sizeLimit",), E.forbidden("SizeLimit field must be a valid resource quantity")))


def _host_path(src, at, out):
    path = src.get("path")
    if not _str(path):
        out.append((VOLUME, at + ("path",), E.required()))
    elif ".." in path.split("/"):
        out.append((VOLUME, at + ("path",), E.invalid(path, "must not contain '..'")))
    kind = src.get("type")
    if isinstance(kind, str) and kind not in _HOST_PATH_TYPES:   # validateHostPathType
        out.append((VOLUME, at + ("type",), E.not_supported(kind, list(_HOST_PATH_TYPES))))


def _git_repo(src, at, out):
    validate_local_descending_path(_str(src.get("directory")), at + ("directory",), out, VOLUME)


def _partition(src, at, out):
    part = src.get("partition")
    if _int(part) and not 0 <= part <= 255:
        out.append((VOLUME, at + ("partition",), E.invalid(part, E.inclusive_range(1, 255))))


def _mode(v, at, out):
    if _int(v) and not 0 <= v <= 0o777:
        out.append((VOLUME, at, E.invalid(v, FILE_MODE)))


def _items(src, at, out):
    _mode(src.get("defaultMode"), at + ("defaultMode",), out)
    for i, kp in enumerate(_list(src.get("items"))):
        key_to_path(_dict(kp), at + ("items", i), out)


def key_to_path(kp: dict, at: tuple, out: list) -> None:
    """validateKeyToPath."""
    if not _str(kp.get("key")):
        out.append((VOLUME, at + ("key",), E.required()))
    path = _str(kp.get("path"))
    if not path:
        out.append((VOLUME, at + ("path",), E.required()))
    local_non_reserved_path(path, at + ("path",), out)
    _mode(kp.get("mode"), at + ("mode",), out)


def local_non_reserved_path(path: str, at: tuple, out: list) -> None:
    """ValidateLocalNonReservedPath."""
    validate_local_descending_path(path, at, out, VOLUME)
    if path.startswith("..") and not path.startswith("../"):
        out.append((VOLUME, at, E.invalid(path, "must not start with '..'")))


def _nfs(src, at, out):
    path = src.get("path")
    if isinstance(path, str) and not path.startswith("/"):
        out.append((VOLUME, at + ("path",), E.invalid(path, "must be an absolute path")))


_IQN = re.compile(r"iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$".replace("[:alnum:]", "a-zA-Z0-9"))
_EUI = re.compile(r"^eui.[[:alnum:]]{16}$".replace("[:alnum:]", "a-zA-Z0-9"))
_NAA = re.compile(r"^naa.[[:alnum:]]{32}$".replace("[:alnum:]", "a-zA-Z0-9"))


def _iqn_errors(value: str, at: tuple, out: list, first: str) -> None:
    if not value.startswith(("iqn", "eui", "naa")):
        out.append((VOLUME, at, E.invalid(value, first)))
    elif not {"iqn": _IQN, "eui": _EUI, "naa": _NAA}[value[:3]].search(value):
        out.append((VOLUME, at, E.invalid(value, "must be valid format")))


def _iscsi(src, at, out):
    iqn = src.get("iqn")
    if _str(iqn):
        _iqn_errors(iqn, at + ("iqn",), out, "must be valid format starting with iqn, eui, or naa")
    lun = src.get("lun")
    if _int(lun) and not 0 <= lun <= 255:
        out.append((VOLUME, at + ("lun",), E.invalid(lun, _LUN)))
    if (src.get("chapAuthDiscovery") or src.get("chapAuthSession")) and src.get("secretRef") is None:
        out.append((VOLUME, at + ("secretRef",), E.required()))
    initiator = src.get("initiatorName")
    if isinstance(initiator, str):
        _iqn_errors(initiator, at + ("initiatorname",), out, "must be valid format starting with iqn, eui, or naa")


def _flocker(src, at, out):
    name, uuid = _str(src.get("datasetName")), _str(src.get("datasetUUID"))
    if not name and not uuid:
        out.append((VOLUME, at, E.required("one of datasetName and datasetUUID is required")))
    if name and uuid:
        out.append((VOLUME, at, E.invalid("resource", "datasetName and datasetUUID can not be specified "
                                                      "simultaneously")))
    if "/" in name:
        out.append((VOLUME, at + ("datasetName",), E.invalid(name, "must not contain '/'")))


def _cinder(src, at, out):
    if isinstance(src.get("secretRef"), dict) and not _str(src["secretRef"].get("name")):
        out.append((VOLUME, at + ("secretRef", "name"), E.required()))


def _quobyte(src, at, out):
    registry = _str(src.get("registry"))
    if not registry:
        out.append((VOLUME, at + ("registry",), E.required("must be a host:port pair or multiple pairs separated by "
                                                           "commas")))
    elif len(_str(src.get("tenant"))) >= 65:
        out.append((VOLUME, at + ("tenant",), E.required("must be a UUID and may not exceed a length of 64 "
                                                         "characters")))
    elif any(not re.fullmatch(r"(\[[^\]]*\]|[^:]*):[^:]*", pair) for pair in registry.split(",")):
        out.append((VOLUME, at + ("registry",), E.invalid(registry, "must be a host:port pair or multiple pairs "
                                                                    "separated by commas")))
    if not _str(src.get("volume")):
        out.append((VOLUME, at + ("volume",), E.required()))


def downward_api_file(f: dict, at: tuple, out: list) -> None:
    """validateDownwardAPIVolumeFile (reported at the source's path, as upstream does)."""
    path = _str(f.get("path"))
    if not path:
        out.append((VOLUME, at + ("path",), E.required()))
    local_non_reserved_path(path, at + ("path",), out)
    if isinstance(f.get("fieldRef"), dict):
        validate_object_field_selector(f["fieldRef"], VOLUME_FIELD_PATHS, at + ("fieldRef",), out, VOLUME)
        if f.get("resourceFieldRef") is not None:
            out.append((VOLUME, at, E.invalid("resource", "fieldRef and resourceFieldRef can not be specified "
                                                          "simultaneously")))
    elif isinstance(f.get("resourceFieldRef"), dict):
        validate_resource_field_selector(f["resourceFieldRef"], at + ("resourceFieldRef",), out, VOLUME, volume=True)
    else:
        out.append((VOLUME, at, E.required("one of fieldRef and resourceFieldRef is required")))
    _mode(f.get("mode"), at + ("mode",), out)


def _downward(src, at, out):
    _mode(src.get("defaultMode"), at + ("defaultMode",), out)
    for f in _list(src.get("items")):
        downward_api_file(_dict(f), at, out)


def _fc(src, at, out):
    wwns, wwids = _list(src.get("targetWWNs")), _list(src.get("wwids"))
    if not wwns and not wwids:
        out.append((VOLUME, at + ("targetWWNs",), E.required("must specify either targetWWNs or wwids, but not both")))
    if wwns and wwids:
        out.append((VOLUME, at + ("targetWWNs",), E.invalid(wwns, "targetWWNs and wwids can not be specified "
                                                                  "simultaneously")))
    if wwns:
        lun = src.get("lun")
        if lun is None:
            out.append((VOLUME, at + ("lun",), E.required("lun is required if targetWWNs is specified")))
        elif _int(lun) and not 0 <= lun <= 255:
            out.append((VOLUME, at + ("lun",), E.invalid(lun, _LUN)))


def _flex(src, at, out):
    for k in _dict(src.get("options")):
        ns = str(k).split("/", 1)[0] if "/" in str(k) else str(k)
        normalized = "." + ns.lower()
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            out.append((VOLUME, at + ("options", k), E.invalid(k, "kubernetes.io and k8s.io namespaces are reserved")))


def _azure_disk(src, at, out):
    caching, kind, uri = src.get("cachingMode"), src.get("kind"), _str(src.get("diskURI"))
    if isinstance(caching, str) and caching not in ("None", "ReadOnly", "ReadWrite"):
        out.append((VOLUME, at + ("cachingMode",), E.not_supported(caching, ["None", "ReadOnly", "ReadWrite"])))
    if isinstance(kind, str) and kind not in ("Dedicated", "Managed", "Shared"):
        out.append((VOLUME, at + ("kind",), E.not_supported(kind, ["Dedicated", "Managed", "Shared"])))
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        out.append((VOLUME, at + ("diskURI",), E.not_supported(uri, [
            "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"])))
    if kind is not None and kind != "Managed" and not uri.startswith("https://"):
        out.append((VOLUME, at + ("diskURI",), E.not_supported(uri, [
            "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"])))


def _storageos(src, at, out):
    name, ns = _str(src.get("volumeName")), _str(src.get("volumeNamespace"))
    if not name:
        out.append((VOLUME, at + ("volumeName",), E.required()))
    else:
        out.extend((VOLUME, at + ("volumeName",), E.invalid(name, m)) for m in E.is_dns1123_label(name))
    if ns:
        out.extend((VOLUME, at + ("volumeNamespace",), E.invalid(ns, m)) for m in E.is_dns1123_label(ns))
    _cinder(src, at, out)


def csi_driver_name(name, at: tuple, out: list) -> None:
    """ValidateCSIDriverName."""
    if not isinstance(name, str):
        return
    if not name:
        out.append((VOLUME, at, E.required()))
    if len(name) > 63:
        out.append((VOLUME, at, "Too long: may not be more than 63 bytes"))
    out.extend((VOLUME, at, E.invalid(name, m)) for m in E.is_dns1123_subdomain(name.lower()))


def _csi(src, at, out):
    csi_driver_name(src.get("driver", ""), at + ("driver",), out)
    ref = src.get("nodePublishSecretRef")
    if isinstance(ref, dict):
        name = _str(ref.get("name"))
        if not name:
            out.append((VOLUME, at + ("nodePublishSecretRef", "name"), E.required()))
        else:   # upstream's path: csi.name
            out.extend((VOLUME, at + ("name",), E.invalid(name, m)) for m in E.is_dns1123_subdomain(name))


def _ephemeral(src, at, out):
    template = src.get("volumeClaimTemplate")
    if not isinstance(template, dict):
        out.append((VOLUME, at + ("volumeClaimTemplate",), E.required()))
    else:
        pvc_template(template, at + ("volumeClaimTemplate",), out)


def _projected(src, at, out):
    """validateProjectedVolumeSource and validateProjectionSources (clusterTrustBundle's signer-name
    checks are ValidateSignerName's: not ported)."""
    _mode(src.get("defaultMode"), at + ("defaultMode",), out)
    paths: set = set()
    for i, s in enumerate(_list(src.get("sources"))):
        s = _dict(s)
        sp = at + ("sources", i)
        count = 0
        for kind in ("secret", "configMap"):
            if isinstance(s.get(kind), dict):
                count += 1
                obj = s[kind]
                if not _str(obj.get("name")):
                    out.append((VOLUME, sp + (kind, "name"), E.required()))
                for j, kp in enumerate(_list(obj.get("items"))):
                    key_to_path(_dict(kp), sp + (kind, "items", j), out)
                    p = _str(_dict(kp).get("path"))
                    if p and p in paths:
                        out.append((VOLUME, at, E.invalid(obj.get("name", ""), "conflicting duplicate paths")))
                    paths.add(p)
        if isinstance(s.get("downwardAPI"), dict):
            count += 1
            for f in _list(s["downwardAPI"].get("items")):
                downward_api_file(_dict(f), sp + ("downwardAPI",), out)
                p = _str(_dict(f).get("path"))
                if p and p in paths:
                    out.append((VOLUME, at, E.invalid(p, "conflicting duplicate paths")))
                paths.add(p)
        if isinstance(s.get("serviceAccountToken"), dict):
            count += 1
            _token(s["serviceAccountToken"], sp + ("serviceAccountToken",), at, out)
        if isinstance(s.get("clusterTrustBundle"), dict):
            count += 1
            _trust_bundle(s["clusterTrustBundle"], sp + ("clusterTrustBundle",), at, paths, out)
        if count > 1:
            out.append((VOLUME, sp, E.forbidden("may not specify more than 1 volume type per source")))


def _token(tok, tp, at, out):
    seconds = tok.get("expirationSeconds", 3600)   # SetDefaults_ServiceAccountTokenProjection
    if _int(seconds) and seconds < 600:
        out.append((VOLUME, tp + ("expirationSeconds",), E.invalid(seconds, "may not specify a duration less than 10 "
                                                                            "minutes")))
    if _int(seconds) and seconds > 1 << 32:
        out.append((VOLUME, tp + ("expirationSeconds",), E.invalid(seconds, "may not specify a duration larger than "
                                                                            "2^32 seconds")))
    path = _str(tok.get("path"))
    if not path:
        out.append((VOLUME, at + ("path",), E.required()))
    else:
        local_non_reserved_path(path, at + ("path",), out)


def _trust_bundle(b, bp, at, paths, out):
    name, signer = b.get("name"), b.get("signerName")
    if name is not None and signer is not None:
        out.append((VOLUME, bp, E.invalid(b, "only one of name and signerName may be used")))
    elif name is not None:
        if name == "":
            out.append((VOLUME, bp + ("name",), E.required("must be a valid object name")))
        if b.get("labelSelector") is not None:
            out.append((VOLUME, bp + ("labelSelector",), E.invalid(b["labelSelector"], "labelSelector must be unset "
                                                                                       "if name is specified")))
    elif signer is not None:
        if signer == "":
            out.append((VOLUME, bp + ("signerName",), E.required("must be a valid signer name")))
        validate_label_selector(b.get("labelSelector"), bp + ("labelSelector",), out, VOLUME)
    else:
        out.append((VOLUME, bp, E.required("either name or signerName must be specified")))
    path = _str(b.get("path"))
    if not path:
        out.append((VOLUME, bp + ("path",), E.required()))
    local_non_reserved_path(path, bp + ("path",), out)
    if path in paths:
        out.append((VOLUME, at, E.invalid(path, "conflicting duplicate paths")))
    paths.add(path)


_CHECKS = {
    "emptyDir": _empty_dir, "hostPath": _host_path, "gitRepo": _git_repo, "gcePersistentDisk": _partition,
    "awsElasticBlockStore": _partition, "secret": _items, "configMap": _items, "nfs": _nfs, "iscsi": _iscsi,
    "flocker": _flocker, "cinder": _cinder, "quobyte": _quobyte, "downwardAPI": _downward, "fc": _fc,
    "flexVolume": _flex, "azureDisk": _azure_disk, "storageos": _storageos, "projected": _projected, "csi": _csi,
    "ephemeral": _ephemeral,
}
for _k in ("quobyte", "storageos", "hostPath"):
    _REQUIRED.pop(_k, None)


def _source_extra(kind, src, v, at, pod_name, out):
    """validateVolumeSource's own checks around the sources: the iSCSI initiator's name length and an
    ephemeral volume's PVC name (`<pod>-<volume>`, ValidatePersistentVolumeName)."""
    name = _str(v.get("name"))
    if kind == "iscsi" and src.get("initiatorName") is not None \
            and len(name + ":" + _str(src.get("targetPortal"))) > 64:
        out.append((VOLUME, at + ("name",), E.invalid(name, "Total length of <volume name>:<iscsi.targetPortal> must "
                                                            "be under 64 characters if iscsi.initiatorName is "
                                                            "specified.")))
    if kind == "ephemeral" and pod_name and name:
        pvc = f"{pod_name}-{name}"
        out.extend((VOLUME, at + ("ephemeral", "name"), E.invalid(name, f"PVC name {E.value(pvc)}: {m}"))
                   for m in E.is_dns1123_subdomain(pvc))


# ---------------------------------------------------------------- claim templates

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")


def pvc_template(template: dict, at: tuple, out: list) -> None:
    """ValidatePersistentVolumeClaimTemplate: its metadata (ValidateTemplateObjectMeta: labels and
    annotations) and ValidatePersistentVolumeClaimSpec's checks of access modes, storage request and
    volume mode (the data source checks, validateDataSource and validateDataSourceRef, are too)."""
    from .coresecurity import validate_annotations
    from .corespec import validate_labels
    meta = _dict(template.get("metadata"))   # ValidateTemplateObjectMeta
    shifted: list = []
    validate_annotations(_dict(meta.get("annotations")), at + ("metadata", "annotations"), shifted)
    out.extend((VOLUME, p, m) for _, p, m in shifted)
    validate_labels(_dict(meta.get("labels")), at + ("metadata", "labels"), out, VOLUME)
    for key in sorted(k for k in meta if k not in ("labels", "annotations") and meta[k] not in (None, "", {}, [])):
        out.append((VOLUME, at + ("metadata", key), E.forbidden("cannot be set")))
    pvc_spec(_dict(template.get("spec")), at + ("spec",), out)


def _positive(q) -> bool:
    """ValidatePositiveQuantityValue (a malformed quantity is SC001's)."""
    from ...kernel import quantity
    try:
        return quantity.parse(q) > 0
    except ValueError:
        return True


def pvc_spec(spec: dict, at: tuple, out: list) -> None:
    modes = _list(spec.get("accessModes"))
    if not modes:
        out.append((VOLUME, at + ("accessModes",), E.required("at least 1 access mode is required")))
    for m in modes:
        if isinstance(m, str) and m not in _ACCESS_MODES:
            out.append((VOLUME, at + ("accessModes",), E.not_supported(m, list(_ACCESS_MODES))))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        out.append((VOLUME, at + ("accessModes",), E.forbidden("may not use ReadWriteOncePod with other access "
                                                               "modes")))
    _pvc_rest(spec, at, out)


def _pvc_rest(spec, at, out):
    storage = _dict(_dict(spec.get("resources")).get("requests")).get("storage")
    # upstream's path: resources[storage] (fldPath.Child("resources").Key("storage"))
    if storage is None:
        out.append((VOLUME, at + ("resources", "storage"), E.required()))
    elif not _positive(storage):
        out.append((VOLUME, at + ("resources", "storage"), E.invalid(str(storage), "must be greater than zero")))
    mode = spec.get("volumeMode")
    if isinstance(mode, str) and mode not in ("Block", "Filesystem"):
        out.append((VOLUME, at + ("volumeMode",), E.not_supported(mode, ["Block", "Filesystem"])))
    sel = spec.get("selector")
    validate_label_selector(sel, at + ("selector",), out, VOLUME)
    for key in ("dataSource", "dataSourceRef"):
        if isinstance(spec.get(key), dict):
            _data_source(spec[key], at + (key,), key == "dataSourceRef", out)
    sc = spec.get("storageClassName")
    if isinstance(sc, str) and sc:
        out.extend((VOLUME, at + ("storageClassName",), E.invalid(sc, m)) for m in E.is_dns1123_subdomain(sc))


def _data_source(ref: dict, at: tuple, is_ref: bool, out: list) -> None:
    """validateDataSource and validateDataSourceRef."""
    for key in ("name", "kind"):
        if not _str(ref.get(key)):
            out.append((VOLUME, at + (key,), E.required()))
    group, kind = _str(ref.get("apiGroup")), ref.get("kind", "")
    if not group and kind != "PersistentVolumeClaim":
        out.append((VOLUME, at, E.invalid(kind, "must be 'PersistentVolumeClaim' when referencing the default "
                                                "apiGroup")))
    if group:
        out.extend((VOLUME, at + ("apiGroup",), E.invalid(group, m)) for m in E.is_dns1123_subdomain(group))
    ns = _str(ref.get("namespace")) if is_ref else ""
    if ns:
        out.extend((VOLUME, at + ("namespace",), E.invalid(ns, m)) for m in E.is_dns1123_label(ns))


# ---------------------------------------------------------------- PersistentVolume

# ValidatePersistentVolumeSpec's sources, in its order. The pod volume checkers serve the sources it
# checks with the same function; the in-tree plugins with a PV-only checker (glusterfs, rbd, cephfs,
# iscsi, cinder, flexVolume, azureFile, scaleIO, storageos) count for the one-source rule only.
PV_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
              "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume",
              "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi")
_PV_SHARED = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "flocker", "nfs", "quobyte", "fc",
              "vsphereVolume", "photonPersistentDisk", "portworxVolume", "azureDisk")
_PV_FORBID_PATH = {"cephfs": "cephFS"}   # upstream's spelling of the path in its Forbidden error
_RECLAIM = ["Delete", "Recycle", "Retain"]


def pv_spec(spec: dict, at: tuple, out: list) -> None:
    """ValidatePersistentVolumeSpec for a PersistentVolume object (not an inline volume)."""
    _pv_modes(_list(spec.get("accessModes")), at + ("accessModes",), out)
    _pv_capacity(_dict(spec.get("capacity")), at + ("capacity",), out)
    policy = spec.get("persistentVolumeReclaimPolicy")
    if isinstance(policy, str) and policy and policy not in _RECLAIM:
        out.append((VOLUME, at + ("persistentVolumeReclaimPolicy",), E.not_supported(policy, _RECLAIM)))
    affinity = spec.get("nodeAffinity")
    if isinstance(affinity, dict):
        _pv_affinity(affinity, at + ("nodeAffinity",), out)
    _pv_sources(spec, at, isinstance(affinity, dict), out)
    sc = spec.get("storageClassName")
    if isinstance(sc, str) and sc:
        out.extend((VOLUME, at + ("storageClassName",), E.invalid(sc, m)) for m in E.is_dns1123_subdomain(sc))
    mode = spec.get("volumeMode")
    if isinstance(mode, str) and mode not in ("Block", "Filesystem"):
        out.append((VOLUME, at + ("volumeMode",), E.not_supported(mode, ["Block", "Filesystem"])))


def _pv_modes(modes: list, at: tuple, out: list) -> None:
    if not modes:
        out.append((VOLUME, at, E.required()))
    for m in modes:
        if isinstance(m, str) and m not in _ACCESS_MODES:
            out.append((VOLUME, at, E.not_supported(m, list(_ACCESS_MODES))))
    if "ReadWriteOncePod" in modes and any(m in _ACCESS_MODES and m != "ReadWriteOncePod" for m in modes):
        out.append((VOLUME, at, E.forbidden("may not use ReadWriteOncePod with other access modes")))


def _pv_affinity(affinity: dict, at: tuple, out: list) -> None:
    """validateVolumeNodeAffinity: ValidateNodeSelector on the required terms, which must be there."""
    if isinstance(affinity.get("required"), dict):
        from .corespec import validate_node_selector
        validate_node_selector(affinity["required"], at + ("required",), out)
    else:
        out.append((VOLUME, at + ("required",), E.required("must specify required node constraints")))


def _pv_capacity(capacity: dict, at: tuple, out: list) -> None:
    """The capacity: required, storage alone (NotSupported names the map), each quantity positive."""
    if not capacity:
        out.append((VOLUME, at, E.required()))
    if "storage" not in capacity or len(capacity) > 1:
        out.append((VOLUME, at, E.not_supported(capacity, ["storage"])))
    for name, q in capacity.items():
        if isinstance(q, (str, int, float)) and not _positive(q):
            out.append((VOLUME, at + (name,), E.invalid(str(q), "must be greater than zero")))


def _pv_sources(spec: dict, at: tuple, has_affinity: bool, out: list) -> None:
    """One volume source, checked (the first one; each further one is Forbidden)."""
    count = 0
    for kind in PV_SOURCES:
        src = spec.get(kind)
        if not isinstance(src, dict):
            continue
        if count and kind != "flexVolume":   # upstream counts flexVolume without this check
            out.append((VOLUME, at + (_PV_FORBID_PATH.get(kind, kind),),
                        E.forbidden("may not specify more than 1 volume type")))
            continue
        count += 1
        if kind in _PV_SHARED:
            _source(kind, src, at + (_CHECK_PATH.get(kind, kind),), out)
        elif kind == "csi":
            _pv_csi(src, at + ("csi",), out)
        elif kind == "local":
            _pv_local(src, at + ("local",), has_affinity, out)
    if not count:
        out.append((VOLUME, at, E.required("must specify a volume type")))
    host = _dict(spec.get("hostPath")).get("path")
    if isinstance(host, str) and host and _clean(host) == "/" and spec.get("persistentVolumeReclaimPolicy") == "Recycle":
        out.append((VOLUME, at + ("persistentVolumeReclaimPolicy",),
                    E.forbidden("may not be 'recycle' for a hostPath mount of '/'")))


def _clean(path: str) -> str:
    import posixpath
    return posixpath.normpath(path).replace("//", "/")


def _pv_local(src: dict, at: tuple, has_affinity: bool, out: list) -> None:
    """validateLocalVolumeSource, and the node affinity a local volume needs."""
    path = _str(src.get("path"))
    if not path:
        out.append((VOLUME, at + ("path",), E.required()))
    elif ".." in path.split("/"):   # validatePathNoBacksteps
        out.append((VOLUME, at + ("path",), E.invalid(path, "must not contain '..'")))
    if not has_affinity:
        out.append((VOLUME, at[:-1] + ("nodeAffinity",), E.required("Local volume requires node affinity")))


def _pv_csi(src: dict, at: tuple, out: list) -> None:
    """validateCSIPersistentVolumeSource, with validatePVSecretReference on each secret it names."""
    csi_driver_name(src.get("driver", ""), at + ("driver",), out)
    if not _str(src.get("volumeHandle")):
        out.append((VOLUME, at + ("volumeHandle",), E.required()))
    for key in ("controllerPublishSecretRef", "controllerExpandSecretRef", "nodePublishSecretRef",
                "nodeExpandSecretRef"):
        ref = src.get(key)
        if not isinstance(ref, dict):
            continue
        name, ns = _str(ref.get("name")), _str(ref.get("namespace"))
        if not name:
            out.append((VOLUME, at + (key, "name"), E.required()))
        else:
            out.extend((VOLUME, at + (key, "name"), E.invalid(name, m)) for m in E.is_dns1123_subdomain(name))
        if not ns:
            out.append((VOLUME, at + (key, "namespace"), E.required()))
        else:
            out.extend((VOLUME, at + (key, "namespace"), E.invalid(ns, m)) for m in E.is_dns1123_label(ns))
