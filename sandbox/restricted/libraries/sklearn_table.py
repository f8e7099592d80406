"""scikit-learn's doors: joblib's process pools (loky, multiprocessing) and the pickles
they send, joblib's and a model's persistence through pickle, dataset loaders that download
or read and delete directories, and the discovery helper that imports every module it has."""

from __future__ import annotations

from sandbox.restricted.libraries.table import Table

_NO_NETWORK_DATA = ("datasets are not downloaded in the sandbox: use the bundled ones (load_iris, load_wine, "
                    "load_diabetes, load_breast_cancer, load_digits), make_classification / make_regression, or "
                    "a DataFrame of your own")
_NO_PICKLE = ("joblib's files are pickles, and loading one runs whatever callables it names: keep the model in the "
              "snippet (a session keeps it across calls), or save its parameters with json "
              "(model.get_params(), model.coef_.tolist())")


def table(policy) -> Table:
    return Table(
        refused_objects={
            **dict.fromkeys(("joblib.dump", "joblib.load", "joblib.numpy_pickle.dump", "joblib.numpy_pickle.load"),
                            _NO_PICKLE),
            "joblib.Memory": "joblib's cache pickles results to disk and loads them back: call the function again, "
                             "or keep its result in a variable",
            **dict.fromkeys(tuple(f"sklearn.datasets.fetch_{name}" for name in (
                "openml", "california_housing", "covtype", "kddcup99", "lfw_pairs", "lfw_people",
                "olivetti_faces", "rcv1", "species_distributions", "20newsgroups", "20newsgroups_vectorized",
                "file")), _NO_NETWORK_DATA),
            **dict.fromkeys(("sklearn.datasets.get_data_home", "sklearn.datasets.clear_data_home"),
                            "scikit-learn's data directory is not in the sandbox (clear_data_home deletes a "
                            f"directory): {_NO_NETWORK_DATA}"),
            "sklearn.datasets.load_files": "it reads every file under a directory it is given: build the texts "
                                           "and labels as lists, or pass the data in the call's files",
            **dict.fromkeys(("sklearn.datasets.load_svmlight_file", "sklearn.datasets.load_svmlight_files",
                             "sklearn.datasets.dump_svmlight_file"),
                            "svmlight files are read and written by path with the real open(): build the arrays "
                            "with numpy or pandas (pd.read_csv of a file passed in the call)"),
            **dict.fromkeys(("sklearn.utils.all_estimators", "sklearn.utils.discovery.all_estimators",
                             "sklearn.utils.discovery.all_displays", "sklearn.utils.discovery.all_functions"),
                            "it imports every module of scikit-learn, its tests too: import the estimator you "
                            "want by name, e.g. from sklearn.linear_model import LinearRegression"),
            "sklearn.show_versions": "it probes the host (platform, the loaded shared libraries): read "
                                     "sklearn.__version__",
        },
        # joblib's pools start processes (loky, multiprocessing) that unpickle the work they
        # are sent, or threads the sandbox's process limit does not allow: every Parallel of a
        # snippet's run (an estimator's n_jobs=-1 included) runs its tasks one after the other
        forced_keywords={"joblib.parallel.Parallel.__init__": {"n_jobs": 1}},
    )
