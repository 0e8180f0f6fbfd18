"""The build context every workload builder gets: the platform, the profile
(cluster) being built, and the chart its objects go into."""
from __future__ import annotations

from dataclasses import dataclass

import cdk8s

from ...model import Platform, Profile, hardware
from ...model.check_context import CheckContext
from .. import cdk


@dataclass
class BuildContext:
    spec: Platform
    profile: Profile
    chart: cdk8s.Chart

    def image(self, key: str) -> str:
        return self.spec.image(key, self.profile)

    def add_custom(self, body: dict) -> None:
        cdk.custom(self.chart, body)

    @property
    def checks(self) -> CheckContext:
        """The same platform and profile, as the spec's kind methods take them."""
        return CheckContext(self.spec, self.profile)

    def accelerator(self, w) -> str:
        """The accelerator the workload runs on in this profile (the checks made sure there is one)."""
        accel = hardware.accelerator_for(w, self.profile, self.spec)
        assert accel is not None, "checked by the spec checks"
        return accel

    @property
    def hf_token_secret(self) -> str:
        """The profile's Hugging Face token Secret, for kinds that list it in required_values."""
        name = self.profile.values.hf_token_secret
        assert name is not None, "checked by the spec checks (required_values)"
        return name

    @property
    def model_bucket(self) -> str:
        """The profile's model bucket, for kinds that list it in required_values."""
        bucket = self.profile.values.model_bucket
        assert bucket is not None, "checked by the spec checks (required_values)"
        return bucket
