"""Maps the repo's top-level rooms (checker/, model/, examples/) into the eoscheck namespace.

The house plan keeps them at the top of the repo; installed, they live under one name so that no
generic top-level package such as ``model`` lands in site-packages. Subpackages are found here so
that adding one needs no edit to pyproject.toml.
"""

from setuptools import find_packages, setup

ROOMS = {"eoscheck": "eoscheck", "eoscheck.checker": "checker", "eoscheck.model": "model",
         "eoscheck.examples": "examples"}

packages: list[str] = []
package_dir: dict[str, str] = {}
for name, directory in ROOMS.items():
    packages.append(name)
    package_dir[name] = directory
    for sub in find_packages(directory):
        packages.append(f"{name}.{sub}")
        package_dir[f"{name}.{sub}"] = f"{directory}/{sub.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)
