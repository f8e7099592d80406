"""seaborn's doors: the example datasets it downloads and caches in a directory of the
host's, and the list of them it fetches."""

from __future__ import annotations

from sandbox.restricted.libraries.table import Table

_NO_DOWNLOAD = ("seaborn's example datasets are downloaded, and the sandbox has no network: build the DataFrame "
                "with pandas (pd.DataFrame({...}), or pd.read_csv of a file passed in the call), or use one that "
                "ships with a library (sklearn.datasets.load_iris(as_frame=True).frame)")


def table(policy) -> Table:
    return Table(
        refused_objects={
            **dict.fromkeys(("seaborn.load_dataset", "seaborn.utils.load_dataset", "seaborn.get_dataset_names",
                             "seaborn.utils.get_dataset_names"), _NO_DOWNLOAD),
            **dict.fromkeys(("seaborn.get_data_home", "seaborn.utils.get_data_home"),
                            f"it makes a directory on the host's file system for downloads: {_NO_DOWNLOAD}"),
        },
    )
