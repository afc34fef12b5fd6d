"""CT volume / report pairs: preprocessed volumes stored as .pt tensors next to a reports table."""
import os

import pandas as pd
import torch
from torch.utils.data import Dataset


class CTReportDataset(Dataset):
    def __init__(self, data_folder, csv_file, min_slices=20):
        self.data_folder = data_folder
        self.min_slices = min_slices
        reports = pd.read_excel(csv_file) if csv_file.endswith(".xlsx") else pd.read_csv(csv_file)
        self.samples = []
        for _, row in reports.iterrows():
            path = os.path.join(data_folder, f"{row['VolumeName']}.pt")
            if os.path.exists(path):
                text = f"{row['Findings_EN']} {row['Impressions_EN']}"
                self.samples.append((path, text))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        path, text = self.samples[index]
        volume = torch.load(path)  # (1, D, H, W), already resampled and clipped to [-1, 1]
        return volume.float(), text.replace('"', "").replace("\n", " ")
